import { describe, expect, test } from "bun:test";
import { locateInHcl } from "../../src/lib/hcl-positions.ts";

const TEXT = [
  "/* a block comment job \"x\" {", //    1
  "   still comment } */", //             2
  'job "web" {', //                       3
  '  meta = { "team" = "core", owner: "me" }', // 4
  '  group "a" { count = 1 }', //         5
  '  group "b" {', //                     6
  '    note = "${ "}" } // not a comment"', // 7
  "    script = <<-EOT", //               8
  "      group \"c\" {", //               9
  "      EOT", //                         10
  "    list = [", //                      11
  "      { x = 1 },", //                  12
  "    ]", //                             13
  "    task \"t\" {} // trailing", //     14
  "    task \"t\" {}", //                 15
  "  }", //                               16
  "}", //                                 17
].join("\n");

describe("locateInHcl", () => {
  test("blocks by name and label, attributes, object keys", () => {
    expect(locateInHcl(TEXT, [{ name: "job" }])).toEqual({ line: 3, column: 1 });
    expect(locateInHcl(TEXT, [{ name: "job", labels: ["web"] }, { name: "meta" }, { name: "owner" }])).toEqual({ line: 4, column: 29 });
    expect(locateInHcl(TEXT, [{ name: "job" }, { name: "meta" }, { name: "team" }])).toEqual({ line: 4, column: 12 });
    expect(locateInHcl(TEXT, [{ name: "job" }, { name: "group", labels: ["a"] }, { name: "count" }])).toEqual({ line: 5, column: 15 });
    expect(locateInHcl(TEXT, [{ name: "job" }, { name: "group", labels: ["b"] }, { name: "list" }])).toEqual({ line: 11, column: 5 });
  });

  test("strings, templates, heredocs and comments hide what looks like blocks", () => {
    expect(locateInHcl(TEXT, [{ name: "job" }, { name: "group", labels: ["c"] }])).toEqual({ line: 3, column: 1 });
    expect(locateInHcl(TEXT, [{ name: "job" }, { name: "group", labels: ["b"] }, { name: "task", labels: ["t"] }])).toEqual({ line: 14, column: 5 });
    expect(locateInHcl(TEXT, [{ name: "job" }, { name: "group", labels: ["b"] }, { name: "task", index: 1 }])).toEqual({ line: 15, column: 5 });
  });

  test("what is missing is placed at the deepest block found; nothing found is undefined", () => {
    expect(locateInHcl(TEXT, [{ name: "job" }, { name: "group", labels: ["a"] }, { name: "task" }])).toEqual({ line: 5, column: 3 });
    expect(locateInHcl(TEXT, [{ name: "variable" }])).toBeUndefined();
  });
});
