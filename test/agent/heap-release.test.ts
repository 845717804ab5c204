import { describe, expect, test } from "bun:test";
import { IDLE_CHECKS, IDLE_CPU_SHARE, RELEASE_CHECK_INTERVAL_MS, RELEASE_GROWTH_BYTES, RELEASE_MIN_INTERVAL_MS, RELEASE_WORK_CPU_MS, ReleasePolicy } from "../../src/agent/heap-release.ts";

const MIB = 1024 * 1024;
/** A share of a core that makes one check's CPU time all the work a release needs. */
const BUSY = RELEASE_WORK_CPU_MS / RELEASE_CHECK_INTERVAL_MS;
const IDLE = IDLE_CPU_SHARE / 4;

/** One check: the resident size then, and the share of a core the agent used since the check before. */
interface Reading {
  resident: number;
  share: number;
}

const STARTED = 50 * MIB;
/** An agent starting (busy), then idle: the start's own release comes with the last idle check. */
const START: Reading[] = [
  { resident: STARTED, share: BUSY },
  { resident: STARTED, share: BUSY },
  ...Array.from({ length: IDLE_CHECKS }, () => ({ resident: STARTED, share: IDLE })),
];

/**
 * A policy fed the start's checks, then, RELEASE_MIN_INTERVAL_MS after the
 * start's release, the given checks, RELEASE_CHECK_INTERVAL_MS apart; the
 * indices in `readings` of the checks at which it released.
 */
function releasesFor(readings: Reading[]): number[] {
  const checks = [...START, ...readings];
  let at = 0;
  let now = 0;
  let cpuMicros = 0;
  const released: number[] = [];
  const policy = new ReleasePolicy({ residentBytes: () => checks[at]!.resident, cpuMicros: () => cpuMicros, release: () => released.push(at), now: () => now });
  for (; at < checks.length; at++) {
    policy.check();
    const stepMs = at === START.length - 1 ? RELEASE_MIN_INTERVAL_MS : RELEASE_CHECK_INTERVAL_MS;
    now += stepMs;
    // The CPU the next check reads was used over the step before it.
    cpuMicros += (checks[at + 1]?.share ?? 0) * stepMs * 1000;
  }
  expect(released[0]).toBe(START.length - 1);
  return released.slice(1).map((index) => index - START.length);
}

const busy = (resident: number): Reading => ({ resident, share: BUSY });
const idle = (resident: number): Reading => ({ resident, share: IDLE });
const times = (n: number, reading: Reading) => Array.from({ length: n }, () => reading);

describe("when the agent gives free memory back", () => {
  test("its own start is its first burst: released once it turns idle", () => {
    // releasesFor checks it for every case; here with nothing after the start.
    expect(releasesFor([])).toEqual([]);
  });

  test("once the work has stopped, not while it goes on, whatever the memory does meanwhile", () => {
    const base = 60 * MIB;
    // A stream of dispatches: memory rises and falls with each collection, and holds still for
    // several checks at times; the agent is busy throughout.
    const stream = [base, base + 9 * MIB, base + 14 * MIB, base + 14 * MIB, base + 14 * MIB, base + 8 * MIB, base + 20 * MIB, base + 12 * MIB, base + 12 * MIB].map(busy);
    const after = times(IDLE_CHECKS + 2, idle(base + 12 * MIB));
    expect(releasesFor([...stream, ...after])).toEqual([stream.length + IDLE_CHECKS - 1]);
  });

  test("a quiet spell shorter than IDLE_CHECKS inside the work is not its end", () => {
    const base = 60 * MIB;
    const work = [idle(base), busy(base + 10 * MIB), ...times(IDLE_CHECKS - 1, idle(base + 10 * MIB)), busy(base + 12 * MIB)];
    expect(releasesFor(work)).toEqual([]);
    expect(releasesFor([...work, ...times(IDLE_CHECKS, idle(base + 12 * MIB))])).toEqual([work.length + IDLE_CHECKS - 1]);
  });

  test("an idle agent does not release again, however its memory moves", () => {
    const base = 60 * MIB;
    // Garbage made between collections while idle (something polling the API): pages a release
    // would give back, to be taken again before the next.
    const readings: Reading[] = [];
    while (readings.length * RELEASE_CHECK_INTERVAL_MS < 3 * RELEASE_MIN_INTERVAL_MS) readings.push(idle(base), idle(base + 2 * RELEASE_GROWTH_BYTES));
    expect(releasesFor(readings)).toEqual([]);
  });

  test("not after less work than RELEASE_WORK_CPU_MS, then once the work adds up", () => {
    const base = 60 * MIB;
    const light: Reading = { resident: base + 3 * RELEASE_GROWTH_BYTES, share: (BUSY * 2) / 3 };
    const settled = times(IDLE_CHECKS, idle(base + 3 * RELEASE_GROWTH_BYTES));
    expect(releasesFor([idle(base), light, ...settled])).toEqual([]);
    expect(releasesFor([idle(base), light, ...settled, light, ...settled])).toEqual([2 + 2 * IDLE_CHECKS]);
  });

  test("not for growth smaller than RELEASE_GROWTH_BYTES", () => {
    const base = 60 * MIB;
    expect(releasesFor([busy(base), busy(base + RELEASE_GROWTH_BYTES / 2), ...times(IDLE_CHECKS + 2, idle(base + RELEASE_GROWTH_BYTES / 2))])).toEqual([]);
  });

  test("growth is counted from the lowest reading, so memory given back is not counted as a burst", () => {
    const base = 60 * MIB;
    const readings = [busy(base + 8 * MIB), busy(base), ...times(IDLE_CHECKS + 2, idle(base + RELEASE_GROWTH_BYTES - MIB))];
    expect(releasesFor(readings)).toEqual([]);
  });

  test("at most once per minimum interval, however often work starts and stops", () => {
    const base = 60 * MIB;
    const readings: Reading[] = [];
    // Bursts back to back: each grows by twice the threshold and then idles, for three intervals.
    for (let i = 0; readings.length * RELEASE_CHECK_INTERVAL_MS < 3 * RELEASE_MIN_INTERVAL_MS; i++) {
      const grown = base + (2 * i + 1) * RELEASE_GROWTH_BYTES;
      readings.push(busy(grown), ...times(IDLE_CHECKS, idle(grown)));
    }
    const released = releasesFor(readings);
    expect(released.length).toBeGreaterThan(1);
    for (let i = 1; i < released.length; i++) expect((released[i]! - released[i - 1]!) * RELEASE_CHECK_INTERVAL_MS).toBeGreaterThanOrEqual(RELEASE_MIN_INTERVAL_MS);
  });
});
