/**
 * Starting a child inside a cgroup on Deno, whose spawn has no cgroup option.
 * The child must be in its cgroup from its first instruction (a task that
 * forks at once must not leave a process outside its kill list), so this
 * process moves itself into the cgroup for the instant of the spawn, and the
 * child is born there:
 *
 *   own cgroup ──write own pid──> target/cgroup.procs   spawn (fork on this thread)
 *              <──write own pid── own/cgroup.procs
 *
 * The spawn is synchronous on the JS thread, so nothing else runs meanwhile.
 * Moving a process leaves its memory charged where it was (v1 without
 * move_charge_at_immigrate, and v2 always), so the task's cgroup is charged
 * only for what the spawn itself allocates.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseMountinfo } from "../../lib/procfs.ts";

/** This process's directory in the hierarchy that holds `dir`. */
function ownDirBeside(dir: string): string {
  const mount = parseMountinfo(readFileSync("/proc/self/mountinfo", "utf8"))
    .filter((m) => (m.fsType === "cgroup" || m.fsType === "cgroup2") && (dir === m.mountPoint || dir.startsWith(`${m.mountPoint}/`)))
    .sort((a, b) => b.mountPoint.length - a.mountPoint.length)[0];
  if (!mount) throw new Error(`${dir} is not in a cgroup file system`);
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    const controllers = match[1]!.split(",").filter(Boolean);
    const matches =
      mount.fsType === "cgroup2" ? controllers.length === 0 : controllers.length > 0 && controllers.every((c) => mount.superOptions.includes(c));
    if (matches) return match[2] === "/" ? mount.mountPoint : `${mount.mountPoint}${match[2]}`;
  }
  throw new Error(`cannot find this process's cgroup beside ${dir}`);
}

/** Runs `spawn` with this process inside `dir`, so that its child starts there; returns after moving back. */
export function spawnInCgroup<T>(dir: string, spawn: () => T): T {
  const home = ownDirBeside(dir);
  writeFileSync(`${dir}/cgroup.procs`, String(process.pid));
  try {
    return spawn();
  } finally {
    writeFileSync(`${home}/cgroup.procs`, String(process.pid));
  }
}
