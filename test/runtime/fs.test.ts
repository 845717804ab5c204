import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic, writeFileReplacing } from "../../src/runtime/fs.ts";
import { tempDir } from "../helpers/index.ts";

describe.each([
  ["writeFileAtomic", writeFileAtomic],
  ["writeFileReplacing", writeFileReplacing],
] as const)("%s", (_name, write) => {
  test("replaces the file whole, with the mode asked, and leaves no temporary file", () => {
    const dir = tempDir("drover-fs-");
    const path = join(dir, "spec.json");
    writeFileSync(path, "old content, longer than the new");
    write(path, "{}", 0o600);
    expect(readFileSync(path, "utf8")).toBe("{}");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(["spec.json"]);
  });
});
