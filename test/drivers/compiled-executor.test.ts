/**
 * The executor as the compiled binary runs it (bytecode, split chunks, no
 * node:fs): a raw_exec task started, stopped and destroyed through the driver.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { detectCgroups } from "../../src/cgroups/detect.ts";
import { RawExecDriver } from "../../src/drivers/raw-exec.ts";
import { ensureBinary } from "../helpers/binary.ts";
import { isRunning, tempDir } from "../helpers/index.ts";
import { testCgroupParent } from "../executor/fixtures.ts";
import { harnessTask } from "./harness.ts";

const parent = testCgroupParent();

describe("executor from the compiled binary", () => {
  test("runs, reports stats, stops and is destroyed", async () => {
    const dir = tempDir("drover-compiled-");
    const driver = new RawExecDriver({ enabled: true, runDir: join(dir, "run"), cgroups: detectCgroups(), mhzPerCore: 1000, drover: [ensureBinary()] });
    const { handle } = await driver.startTask(harnessTask(dir, parent, 0, ["sleep", "600"]));
    const id = `${handle.allocId}/${handle.taskName}`;
    expect(handle.executor.drover).toMatch(/^\d+\.\d+\.\d+$/);
    expect(Object.keys((await driver.taskStats(id)).Pids)).toContain(String(handle.task.pid));
    // No signal named: the driver sends the default kill signal, SIGINT as in Nomad.
    await driver.stopTask(id, 1_000);
    expect(await driver.waitTask(id)).toMatchObject({ signal: 2 });
    await driver.destroyTask(id, false);
    expect(isRunning(handle.executor.pid)).toBe(false);
    expect(isRunning(handle.task.pid)).toBe(false);
  });
});
