/** How a bad input is reported: the source, then each bad field by its path. */
import { expect, test } from "bun:test";
import * as v from "valibot";
import { parseOrThrow } from "../../src/lib/validation.ts";

const Body = v.strictObject({ Signal: v.string(), Task: v.optional(v.string()) });

test("a missing key is named once, without repeating its own name as what was expected", () => {
  expect(() => parseOrThrow(Body, {}, "request body")).toThrow(/^request body: Signal: is required$/);
});

test("an unknown key and a wrong type each name the field", () => {
  expect(() => parseOrThrow(Body, { Signal: 9, Bogus: 1 }, "request body")).toThrow(
    'request body: Signal: Invalid type: Expected string but received 9; unknown key "Bogus"',
  );
});
