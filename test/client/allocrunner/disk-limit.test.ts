import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { allocDirHook } from "../../../src/client/allocrunner/hooks/alloc-dir.ts";
import { diskLimitHook } from "../../../src/client/allocrunner/hooks/disk-limit.ts";
import { TASK_EVENT } from "../../../src/structs/task-state.ts";
import { waitFor } from "../../helpers/index.ts";
import { allocRunner, placeJob, silentLogger, task } from "../fixtures.ts";

const CHECK_MS = 20;

function jobWithDisk(sizeMb: number): string {
  const logs = "logs {\n max_files = 1\n max_file_size = 1\n }";
  return `job "j" {\n type = "service"\n group "g" {\n restart {\n attempts = 0\n mode = "fail"\n }\n ephemeral_disk {\n size = ${sizeMb}\n }\n ${task("web", "run", logs)}\n ${task("side", "run", logs)}\n }\n}`;
}

describe("ephemeral_disk size", () => {
  test("an alloc that writes past its size has every task killed with Disk Resources Exceeded, and fails", async () => {
    const [alloc] = await placeJob(jobWithDisk(10));
    const { runner } = allocRunner(alloc!, { allocHooks: [allocDirHook(), diskLimitHook(silentLogger, CHECK_MS)] });
    const done = runner.run();
    await waitFor("tasks running", () => Object.values(runner.taskStates()).every((state) => state.State === "running"));
    // Within the size: nothing happens for a few checks.
    writeFileSync(join(runner.allocDir.data, "small"), new Uint8Array(4 * 2 ** 20));
    await Bun.sleep(CHECK_MS * 5);
    expect(runner.status().status).toBe("running");

    writeFileSync(join(runner.allocDir.data, "big"), new Uint8Array(8 * 2 ** 20));
    await done;
    expect(runner.status().status).toBe("failed");
    for (const state of Object.values(runner.taskStates())) {
      const event = state.Events.find((e) => e.Type === TASK_EVENT.DiskExceeded);
      expect(event).toMatchObject({ DiskLimit: 10, FailsTask: true });
      expect(event!.Message).toMatch(/^the alloc uses 1[2-3] MB of disk, over its ephemeral_disk size of 10 MB$/);
      expect(state).toMatchObject({ State: "dead", Failed: true });
    }
    await runner.destroy();
  });
});
