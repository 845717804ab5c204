import { describe, expect, test } from "bun:test";
import { parseConstraint, versionMatches } from "../../src/lib/version-constraint.ts";

describe("version constraints (go-version's and Nomad's semver)", () => {
  test.each([
    ["1.2.3", ">= 1.2, < 2.0", true],
    ["2.0.0", ">= 1.2, < 2.0", false],
    ["1.2", "= 1.2.0", true],
    ["v1.10.0", "> 1.9", true],
    ["1.4.7", "~> 1.2", true],
    ["2.0.0", "~> 1.2", false],
    ["1.2.9", "~> 1.2.3", true],
    ["1.3.0", "~> 1.2.3", false],
    ["1.2.0-beta1", ">= 1.0", false],
    ["1.2.0-beta2", ">= 1.2.0-beta1", true],
    ["5.15.0-91-generic", ">= 5.12", false],
    ["1.2.3", "!= 1.2.3", false],
  ])("version %s against %s is %p", (version, constraint, expected) => {
    expect(versionMatches(version, constraint, "version")).toBe(expected);
  });

  test("semver compares pre-releases in semver's order and refuses ~>", () => {
    expect(versionMatches("1.2.0-beta1", ">= 1.0", "semver")).toBe(true);
    expect(versionMatches("1.2.0-alpha", "< 1.2.0-beta", "semver")).toBe(true);
    expect(parseConstraint("~> 1.2", "semver")).toBe("malformed constraint: ~> 1.2");
    expect(versionMatches("1.2.0", "~> 1.2", "semver")).toBe(false);
  });

  test("what does not parse never matches", () => {
    expect(versionMatches("not-a-version", ">= 1", "version")).toBe(false);
    expect(parseConstraint(">= banana", "version")).toBe("malformed constraint: >= banana");
  });
});
