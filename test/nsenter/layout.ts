/**
 * A throwaway alloc dir laid out as Nomad's (alloc/{logs,tmp,data},
 * <task>/{local,secrets,tmp}), and the compiled binary's nsenter role started
 * the way the executor starts it. No bun:test here, so bench/ scripts use it too.
 */
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { inNewPidNamespace } from "../../src/nsenter/launch.ts";
import type { IsolationSpecInput } from "../../src/nsenter/spec.ts";
import { roleHandshakeEnv } from "../../src/runtime/self.ts";

export interface AllocLayout {
  root: string;
  allocDir: string;
  taskDir: string;
}

/** Creates the layout under `root`, with the modes Nomad gives it. */
export function createAllocLayout(root: string, task = "web"): AllocLayout {
  const allocDir = join(root, "alloc");
  const taskDir = join(root, task);
  for (const dir of [allocDir, join(allocDir, "logs"), join(allocDir, "tmp"), join(allocDir, "data")]) {
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o1777);
  }
  for (const dir of ["local", "tmp", "secrets"]) mkdirSync(join(taskDir, dir), { recursive: true });
  chmodSync(join(taskDir, "local"), 0o777);
  chmodSync(join(taskDir, "tmp"), 0o777);
  return { root, allocDir, taskDir };
}

export function isolationSpec(layout: AllocLayout, overrides: Partial<IsolationSpecInput> = {}): IsolationSpecInput {
  return {
    argv: ["/bin/true"],
    env: { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", HOME: "/local" },
    hostname: "a1b2c3d4",
    taskDir: layout.taskDir,
    allocDir: layout.allocDir,
    ...overrides,
  };
}

/**
 * `<binary> nsenter <specFile>` as PID 1 of a new PID namespace: what
 * startIsolatedTask does, for a given binary rather than this process's own.
 */
export function startCompiledTask(binary: string, specFile: string) {
  return inNewPidNamespace(() =>
    Bun.spawn([binary, "nsenter", specFile], { env: roleHandshakeEnv(), stdio: ["ignore", "pipe", "pipe"] }),
  );
}
