/**
 * Which cgroup hierarchy this host gives drover, found from the mount table.
 *
 *   cgroup2 mount whose root offers "memory"  -> v2 (pure v2 hosts, most today)
 *   else cgroup v1 "memory" hierarchy mounted -> v1 (legacy and hybrid hosts)
 *   else                                      -> none (tasks run without cgroups)
 *
 * On a hybrid host the v2 mount (/sys/fs/cgroup/unified) holds no resource
 * controllers, so the v1 hierarchies are the ones that can limit and measure.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseMountinfo, type Mount } from "../lib/procfs.ts";

/** The v1 controllers drover uses for a task, each in its own hierarchy or co-mounted. */
export const V1_CONTROLLERS = ["memory", "cpu", "cpuacct", "pids", "freezer"] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

export type CgroupLayout =
  | { mode: "v2"; mount: string; controllers: string[] }
  | { mode: "v1"; mounts: Partial<Record<V1Controller, string>> }
  | { mode: "none"; reason: string };

function readControllers(mount: string): string[] {
  try {
    return readFileSync(join(mount, "cgroup.controllers"), "utf8").trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

export function detectCgroups(mountinfo = "/proc/self/mountinfo"): CgroupLayout {
  let mounts: Mount[];
  try {
    mounts = parseMountinfo(readFileSync(mountinfo, "utf8"));
  } catch (err) {
    return { mode: "none", reason: `cannot read ${mountinfo}: ${(err as Error).message}` };
  }
  for (const mount of mounts.filter((m) => m.fsType === "cgroup2")) {
    const controllers = readControllers(mount.mountPoint);
    if (controllers.includes("memory")) return { mode: "v2", mount: mount.mountPoint, controllers };
  }
  const v1: Partial<Record<V1Controller, string>> = {};
  for (const mount of mounts.filter((m) => m.fsType === "cgroup")) {
    for (const controller of V1_CONTROLLERS) {
      if (mount.superOptions.includes(controller) && !v1[controller]) v1[controller] = mount.mountPoint;
    }
  }
  if (v1.memory) return { mode: "v1", mounts: v1 };
  return { mode: "none", reason: "no cgroup v2 mount offers the memory controller and no cgroup v1 memory hierarchy is mounted" };
}

/**
 * This process's path in each hierarchy, from /proc/self/cgroup:
 * "4:memory:/a/b" gives memory -> /a/b, and "0::/x" gives the v2 path under "".
 */
export function ownCgroupPaths(procCgroup = "/proc/self/cgroup"): Map<string, string> {
  const paths = new Map<string, string>();
  for (const line of readFileSync(procCgroup, "utf8").split("\n")) {
    const match = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!match) continue;
    for (const controller of match[1]!.split(",")) paths.set(controller, match[2]!);
  }
  return paths;
}
