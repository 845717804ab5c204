import { describe, expect, test } from "bun:test";
import { parseFlags, UsageError, wantsHelp } from "../../src/cli/flags.ts";

const spec = { booleans: ["dev", "log-json"], strings: ["data-dir", "log-level"], repeated: ["config"] };

describe("Go-style flags", () => {
  test("single and double dashes, = or a separate value, repeats in order", () => {
    const flags = parseFlags(["-dev", "-config", "a.hcl", "--config=b.hcl", "-log-level", "DEBUG", "--data-dir=/x", "pos"], spec);
    expect(flags.booleans).toEqual({ dev: true });
    expect(flags.repeated.config).toEqual(["a.hcl", "b.hcl"]);
    expect(flags.strings).toEqual({ "log-level": "DEBUG", "data-dir": "/x" });
    expect(flags.positionals).toEqual(["pos"]);
  });

  test("-dev is one flag, not -d -e -v", () => {
    expect(() => parseFlags(["-dev"], { booleans: ["d", "e", "v"] })).toThrow(UsageError);
  });

  test("undefined flags and missing values are usage errors named like Go's", () => {
    expect(() => parseFlags(["-foo"], spec)).toThrow("flag provided but not defined: -foo");
    expect(() => parseFlags(["-data-dir"], spec)).toThrow("flag needs an argument: -data-dir");
    expect(() => parseFlags(["-log-level=a", "-log-level=b"], spec)).toThrow("given more than once");
  });

  test("aliases and -- pass-through", () => {
    const flags = parseFlags(["-f", "-n", "5", "id", "--", "-x"], { booleans: ["f"], strings: ["tail-lines"], aliases: { n: "tail-lines" } });
    expect(flags.strings["tail-lines"]).toBe("5");
    expect(flags.positionals).toEqual(["id", "-x"]);
  });

  test("help is recognised in Nomad's spellings", () => {
    expect(wantsHelp(["-h"])).toBe(true);
    expect(wantsHelp(["x", "-help"])).toBe(true);
    expect(wantsHelp(["-config", "x"])).toBe(false);
  });
});
