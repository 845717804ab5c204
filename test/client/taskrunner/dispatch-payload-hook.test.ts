/**
 * The dispatch_payload hook on its own: a dispatched job's payload lands in
 * the task's local/<file> before it starts, and nowhere outside its task dir.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { dispatchPayloadHook } from "../../../src/client/taskrunner/hooks/dispatch-payload.ts";
import type { TaskHook } from "../../../src/client/taskrunner/hooks/hook.ts";
import { taskDirHook } from "../../../src/client/taskrunner/hooks/task-dir.ts";
import { tempDir } from "../../helpers/index.ts";
import { allocRunner, job, placeJob, task } from "../fixtures.ts";

/** Runs a one-task job whose task asks for the payload in `file`, dispatched with `payload` (null: not dispatched). */
async function runWith(file: string | undefined, payload: string | null, extra: TaskHook[] = []) {
  const [placed] = await placeJob(job([task("t", "exit:0", file === undefined ? "" : `dispatch_payload {\n file = "${file}"\n }`)]));
  // Dispatching is the server's part; here the alloc carries a child job's payload as Nomad's JSON does (base64).
  const alloc = { ...placed!, Job: { ...placed!.Job, Payload: payload === null ? null : Buffer.from(payload).toString("base64") } };
  const fixture = allocRunner(alloc, { taskHooks: () => [taskDirHook({ secretsTmpfs: false }), ...extra, dispatchPayloadHook()] });
  await fixture.runner.run();
  return { ...fixture, state: fixture.runner.taskStates().t!, taskDir: fixture.runner.allocDir.taskDir("t") };
}

describe("the dispatch_payload hook", () => {
  test("writes the payload's bytes to local/<file>, making its directories", async () => {
    const { state, taskDir, driver } = await runWith("input/config.json", '{"size": 3}');
    expect(state.Failed).toBe(false);
    expect(readFileSync(join(taskDir.local, "input/config.json"), "utf8")).toBe('{"size": 3}');
    expect(driver.calls).toEqual(["start t"]);
  });

  test("writes nothing for a job that was not dispatched, or a task without the block", async () => {
    const undispatched = await runWith("input.json", null);
    expect(readdirSync(undispatched.taskDir.local)).toEqual([]);
    const without = await runWith(undefined, "data");
    expect(readdirSync(without.taskDir.local)).toEqual([]);
  });

  test("a file that climbs out of the task dir, or leads out through a symlink, fails the start and writes nothing there", async () => {
    const climbing = await runWith("../../escaped.txt", "x");
    expect(climbing.state.Events.map((event) => event.SetupError ?? "")).toContain('dispatch_payload: destination "local/../../escaped.txt" is outside the task directory');
    expect(existsSync(join(climbing.taskDir.root, "..", "escaped.txt"))).toBe(false);
    expect(climbing.driver.calls).toEqual([]);

    const outside = tempDir("drover-payload-outside-");
    const plant: TaskHook = { name: "plant", prestart: async (req) => void symlinkSync(outside, join(req.taskDir.local, "out")) };
    const linked = await runWith("out/payload.bin", "x", [plant]);
    expect(linked.state.Events.map((event) => event.SetupError ?? "")).toContain('dispatch_payload: destination "local/out/payload.bin" leads outside the task directory');
    expect(readdirSync(outside)).toEqual([]);
  });
});
