/** The mount thread: its Worker answers from source; a script that is not there is reported by name, and the calls still run. */
import { expect, test } from "bun:test";
import { MountThread, type MountThreadFailure } from "../../src/runtime/mount-thread.ts";

test("from source, the mount thread's Worker answers the probe and nothing is reported", async () => {
  const failures: MountThreadFailure[] = [];
  expect(await new MountThread().probe((failure) => failures.push(failure))).toBe(true);
  expect(failures).toEqual([]);
});

test("a missing Worker script is reported with its path, and mount calls run on this thread instead", async () => {
  const script = "file:///nonexistent/drover/mount-worker.js";
  const thread = new MountThread(script);
  const failures: MountThreadFailure[] = [];
  expect(await thread.probe((failure) => failures.push(failure))).toBe(false);
  expect(failures).toHaveLength(1);
  expect(failures[0]!.script).toBe(script);
  expect(failures[0]!.reason).not.toBe("");
  expect(await thread.call({ op: "detach", points: [] })).toMatchObject({ detached: [], failed: [] });
  expect(failures).toHaveLength(1);
});

test("a mount thread that exits mid-call is reported, and the calls it held are answered on this thread", async () => {
  const script = new URL("./fixtures/mount-worker-exits.ts", import.meta.url).href;
  const thread = new MountThread(script);
  const failures: MountThreadFailure[] = [];
  const held = thread.call({ op: "detach", points: [] });
  expect(await thread.probe((failure) => failures.push(failure))).toBe(false);
  expect(await held).toMatchObject({ detached: [], failed: [] });
  expect(failures).toEqual([{ script, reason: "the mount thread exited (code 3)" }]);
});
