import { describe, expect, test } from "bun:test";
import { jsonText } from "../../src/api/json-body.ts";

describe("list bodies", () => {
  test("are the JSON of the list, whatever its elements", () => {
    const frozen = Object.freeze({ ID: "a", TaskStates: { web: { State: "running" } } });
    const body = [frozen, { ID: "b" }, null, 3, "x"];
    expect(jsonText(body)).toBe(JSON.stringify(body));
    expect(jsonText({ one: 1 })).toBe('{"one":1}');
    expect(jsonText([])).toBe("[]");
  });

  test("a frozen element is serialized once; a changed list shows what changed", () => {
    let reads = 0;
    const element = Object.freeze({
      get ID() {
        reads++;
        return "a";
      },
    });
    jsonText([element]);
    jsonText([element]);
    expect(reads).toBe(1);
    const mutable = { ID: "m" };
    expect(jsonText([mutable])).toBe('[{"ID":"m"}]');
    mutable.ID = "n";
    expect(jsonText([mutable])).toBe('[{"ID":"n"}]');
  });
});
