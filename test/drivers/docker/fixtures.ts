/** A docker task's config in a fresh alloc dir under `dir`, as the task runner would hand it to the driver. */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { AllocDir } from "../../../src/client/allocdir/alloc-dir.ts";
import type { TaskConfig } from "../../../src/drivers/driver.ts";

export function dockerTaskIn(dir: string, cgroupParent: string, driverConfig: Record<string, unknown>, overrides: Partial<TaskConfig> = {}) {
  const allocDir = new AllocDir(join(dir, "allocs"), randomUUID());
  allocDir.build();
  const taskDir = allocDir.buildTask("web", { secretsTmpfs: true });
  const config: TaskConfig = {
    allocId: allocDir.allocId,
    taskName: "web",
    env: {},
    cwd: taskDir.root,
    allocDir: allocDir.shared,
    stdoutPath: join(allocDir.logs, "web.stdout"),
    stderrPath: join(allocDir.logs, "web.stderr"),
    resources: { cpuMhz: 100, memoryMb: 64 },
    cgroupParent,
    driverConfig,
    ...overrides,
  };
  return { config, id: `${config.allocId}/web`, allocDir, taskDir };
}
