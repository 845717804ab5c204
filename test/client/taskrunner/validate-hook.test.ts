/**
 * The validate hook on its own: what this node cannot run fails the task
 * before anything starts, with a Failed Validation event naming why.
 */
import { describe, expect, test } from "bun:test";
import { validateHook } from "../../../src/client/taskrunner/hooks/validate.ts";
import { TASK_EVENT } from "../../../src/structs/task-state.ts";
import { allocRunner, job, placeJob, task } from "../fixtures.ts";

const healthy = () => ({ healthy: true, description: "healthy" });

async function runAs(user: string) {
  const [alloc] = await placeJob(job([task("t", "exit:0", `user = "${user}"`)]));
  const fixture = allocRunner(alloc!, { taskHooks: () => [validateHook(healthy)] });
  await fixture.runner.run();
  return { state: fixture.runner.taskStates().t!, started: fixture.driver.started };
}

describe("the validate hook's user", () => {
  test("a user this node has runs", async () => {
    const { state, started } = await runAs("root");
    expect(state.Failed).toBe(false);
    expect(started).toHaveLength(1);
  });

  // getpwuid takes a 32-bit uid_t: 4294967296 used to wrap to 0 and pass as root (Bun), or throw (Deno); all ones is no uid.
  for (const user of ["no-such-user-here", "4294967295", "4294967296", "4294967296000"]) {
    test(`"${user}" is refused, naming it, and nothing starts`, async () => {
      const { state, started } = await runAs(user);
      expect(state.Failed).toBe(true);
      const event = state.Events.find((e) => e.Type === TASK_EVENT.FailedValidation);
      expect(event?.ValidationError).toBe(`user "${user}" does not exist on this node`);
      expect(started).toHaveLength(0);
    });
  }
});
