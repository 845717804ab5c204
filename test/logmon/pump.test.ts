/** The pump's gather sleep: how it follows the writers, and that usleep always gets what it takes. */
import { expect, test } from "bun:test";
import { GATHER_MAX_US, GATHER_MIN_US, tunedGatherUs } from "../../src/logmon/pump.ts";

const HALF_FULL = 0.5;
const SPARSE = 0.05;
const BETWEEN = 0.2;

/** The sleeps a run of rounds that each brought `brought` goes through, from `start`. */
function sleepsFrom(start: number, brought: number, rounds: number): number[] {
  const sleeps = [start];
  for (let i = 0; i < rounds; i++) sleeps.push(tunedGatherUs(sleeps.at(-1)!, brought));
  return sleeps;
}

test("half-full pipes halve the sleep down to its floor, in whole microseconds (Deno's FFI refuses 62.5)", () => {
  const sleeps = sleepsFrom(GATHER_MAX_US, HALF_FULL, 10);
  expect(sleeps.slice(0, 7)).toEqual([2000, 1000, 500, 250, 125, 62, 50]);
  expect(sleeps.at(-1)).toBe(GATHER_MIN_US);
  expect(sleeps.every(Number.isInteger)).toBe(true);
});

test("sparse pipes double it back up to its ceiling; a round in between leaves it", () => {
  const sleeps = sleepsFrom(GATHER_MIN_US, SPARSE, 10);
  expect(sleeps.slice(0, 7)).toEqual([50, 100, 200, 400, 800, 1600, 2000]);
  expect(sleeps.at(-1)).toBe(GATHER_MAX_US);
  expect(tunedGatherUs(250, BETWEEN)).toBe(250);
});
