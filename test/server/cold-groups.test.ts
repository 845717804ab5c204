/**
 * The finished jobs' GC facts kept in columns (cold-groups.ts) read back as
 * they were written: through growth past the first columns, deletes and
 * reused slots, in the order the jobs were frozen in, like the Map of
 * objects they replace.
 */
import { expect, test } from "bun:test";
import { ColdGroups } from "../../src/server/state/cold-groups.ts";
import type { ColdGroup } from "../../src/server/state/freezer.ts";

/** More than the columns' first size, so they grow at least twice. */
const JOBS = 300;

function group(n: number): ColdGroup {
  return {
    last: 1_700_000_000_000_000_000 + n,
    oldestRemovable: n % 3 === 0 ? undefined : 1_600_000_000_000_000_000 + n,
    batch: n % 2 === 0,
    namespace: n % 5 === 0 ? "other" : "default",
    parentId: n % 4 === 0 ? "" : `parent-${n % 7}`,
    scaled: n % 6 === 0,
  };
}

test("every group reads back as written, in insertion order, as a Map of the objects would", () => {
  const columns = new ColdGroups();
  const map = new Map<string, ColdGroup>();
  for (let n = 0; n < JOBS; n++) {
    columns.set(`job-${n}`, group(n));
    map.set(`job-${n}`, group(n));
  }
  for (let n = 0; n < JOBS; n += 3) {
    expect(columns.delete(`job-${n}`)).toBe(true);
    map.delete(`job-${n}`);
  }
  expect(columns.delete("job-0")).toBe(false);
  // Reused slots: the new jobs come last, with their own facts.
  for (let n = JOBS; n < JOBS + 50; n++) {
    columns.set(`job-${n}`, group(n));
    map.set(`job-${n}`, group(n));
  }
  expect(columns.size).toBe(map.size);
  expect([...columns]).toEqual([...map]);
  expect([...columns.keys()]).toEqual([...map.keys()]);
  expect([...columns.listed()]).toEqual([...map].map(([id, cold]) => ({ ID: id, Namespace: cold.namespace })));
  expect([...columns.parentIds()]).toEqual([...map.values()].map((cold) => cold.parentId));
  expect(columns.get("job-1")).toEqual(group(1));
  expect(columns.get("job-0")).toBeUndefined();
  expect(columns.has("job-3")).toBe(false);
});

test("a list stub stays with its job until the job leaves, and never passes to the job reusing its slot", () => {
  const columns = new ColdGroups();
  columns.set("a", group(1));
  columns.keepListStub("a", '{"ID":"a"}');
  columns.keepListStub("missing", '{"ID":"missing"}');
  expect(columns.get("a")?.listStub).toBe('{"ID":"a"}');
  expect(columns.listStub("a")).toBe('{"ID":"a"}');
  expect(columns.has("missing")).toBe(false);
  columns.delete("a");
  columns.set("b", group(2));
  expect(columns.get("b")).toEqual(group(2));
  expect(columns.get("b")?.listStub).toBeUndefined();
  expect(columns.listStub("b")).toBeUndefined();
});
