/**
 * The task's sysctls (docker `sysctl`), written after its namespaces exist and
 * while /proc is still the host's: the kernel resolves a namespaced sysctl
 * against the writer's own namespaces, so each value lands in the task's IPC
 * or network namespace and nowhere else. The spec admits namespaced keys only
 * (lib/sysctls.ts); an IPC key is refused with ipc_mode "host", a net key on
 * the host's network, since there the namespace is the host's.
 */
import { writeFileSync } from "node:fs";
import { sysctlNamespace, sysctlPath } from "../lib/sysctls.ts";
import type { IsolationMode } from "../lib/isolation-mode.ts";
import { IsolationError } from "./errors.ts";

export function setSysctls(sysctls: Readonly<Record<string, string>>, shared: { network: boolean; ipcMode: IsolationMode }): void {
  for (const [key, value] of Object.entries(sysctls)) {
    const namespace = sysctlNamespace(key);
    if (namespace === null || (namespace === "net" && shared.network) || (namespace === "ipc" && shared.ipcMode === "host")) {
      throw new IsolationError(`sysctl ${key}: not in a namespace of the task's own`);
    }
    try {
      writeFileSync(`/proc/sys/${sysctlPath(key)}`, value);
    } catch (err) {
      throw new IsolationError(`sysctl ${key}=${value}: ${(err as Error).message}`);
    }
  }
}
