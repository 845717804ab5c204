import { describe, expect, test } from "bun:test";
import { BURST_OVER_BYTES, BURST_OVER_CHECKS, RELEASE_GROWTH_BYTES, RELEASE_MIN_INTERVAL_MS, ReleasePolicy } from "../../src/agent/heap-release.ts";

const MIB = 1024 * 1024;

const STARTED = 50 * MIB;
/** The reads of an agent just started and steady: the start's own release comes with the last. */
const START = Array.from({ length: BURST_OVER_CHECKS + 1 }, () => STARTED);

/**
 * A policy fed the start's reads, then, RELEASE_MIN_INTERVAL_MS after the
 * start's release, the given resident sizes, one per check `stepMs` apart;
 * the indices in `readings` of the checks at which it released.
 */
function releasesFor(readings: number[], stepMs = 2_000): number[] {
  const reads = [...START, ...readings];
  let at = 0;
  let now = 0;
  const released: number[] = [];
  const policy = new ReleasePolicy({ residentBytes: () => reads[at]!, release: () => released.push(at), now: () => now });
  for (; at < reads.length; at++) {
    policy.check();
    now += at === START.length - 1 ? RELEASE_MIN_INTERVAL_MS : stepMs;
  }
  expect(released[0]).toBe(START.length - 1);
  return released.slice(1).map((index) => index - START.length);
}

describe("when the agent gives free memory back", () => {
  test("its own start is its first burst: released once its memory is steady", () => {
    // releasesFor checks it for every case; here with nothing after the start.
    expect(releasesFor([])).toEqual([]);
  });

  test("once a burst's growth has stopped, not while it grows", () => {
    const base = 60 * MIB;
    const growing = [base, base + 2 * MIB, base + 5 * MIB, base + 9 * MIB];
    // A pause in the growth shorter than BURST_OVER_CHECKS is still the burst.
    const paused = Array.from({ length: BURST_OVER_CHECKS - 1 }, () => base + 9 * MIB);
    const resumed = [base + 14 * MIB];
    const settled = Array.from({ length: BURST_OVER_CHECKS + 1 }, (_, i) => base + 14 * MIB + (i * BURST_OVER_BYTES) / 4);
    const readings = [...growing, ...paused, ...resumed, ...settled];
    expect(releasesFor(readings)).toEqual([growing.length + paused.length + resumed.length + BURST_OVER_CHECKS - 1]);
  });

  test("not for growth smaller than a burst's", () => {
    const base = 60 * MIB;
    expect(releasesFor([base, ...Array.from({ length: BURST_OVER_CHECKS + 2 }, () => base + RELEASE_GROWTH_BYTES / 2)])).toEqual([]);
  });

  test("growth is counted from the lowest reading, so memory given back is not counted as a burst", () => {
    const base = 60 * MIB;
    const readings = [base + 8 * MIB, base, ...Array.from({ length: BURST_OVER_CHECKS + 2 }, () => base + RELEASE_GROWTH_BYTES - MIB)];
    expect(releasesFor(readings)).toEqual([]);
  });

  test("at most once per minimum interval, however often memory grows and settles", () => {
    const base = 60 * MIB;
    const stepMs = 2_000;
    const readings: number[] = [];
    // Bursts back to back: grow by twice the threshold, settle, again, for two intervals.
    for (let i = 0; readings.length * stepMs < 2 * RELEASE_MIN_INTERVAL_MS; i++) {
      for (let j = 0; j <= BURST_OVER_CHECKS; j++) readings.push(base + (2 * i + 1) * RELEASE_GROWTH_BYTES);
    }
    const released = releasesFor(readings, stepMs);
    expect(released.length).toBeGreaterThan(0);
    for (let i = 1; i < released.length; i++) expect((released[i]! - released[i - 1]!) * stepMs).toBeGreaterThanOrEqual(RELEASE_MIN_INTERVAL_MS);
  });
});
