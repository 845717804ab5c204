/**
 * Which cgroup hierarchies this host gives drover, found from the mount table
 * once at start-up.
 *
 *   cgroup2 mount whose root offers "memory"  -> v2 (pure v2 hosts, most today)
 *   else cgroup v1 "memory" hierarchy mounted -> v1 (legacy and hybrid hosts)
 *   else                                      -> none (tasks run without cgroups)
 *
 * On a v1 host every hierarchy is recorded, not only the ones drover limits
 * or measures with: a task is placed in all of them (and in the v2 tree a
 * hybrid host mounts beside them, /sys/fs/cgroup/unified), so that its cgroup
 * namespace hides everything above its own cgroup in each. A hierarchy the
 * task sat at the root of would stay the host's root for it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseMountinfo, type Mount } from "../lib/procfs.ts";

/** The v1 controllers drover configures for a task (limits, accounting, the device allow-list, freezing). */
export const V1_CONTROLLERS = ["memory", "cpu", "cpuacct", "pids", "freezer", "cpuset", "devices", "blkio"] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

export type CgroupLayout =
  | { mode: "v2"; mount: string; controllers: string[] }
  | {
      mode: "v1";
      /** The hierarchy of each controller drover configures. */
      mounts: Partial<Record<V1Controller, string>>;
      /** Every other v1 hierarchy (named ones such as name=systemd, perf_event, net_cls, ...): placement only. */
      others?: string[];
      /** A hybrid host's v2 tree (no resource controllers): placement only, and the cgroup its sockets carry. */
      unified?: string;
    }
  | { mode: "none"; reason: string };

function readControllers(mount: string): string[] {
  try {
    return readFileSync(join(mount, "cgroup.controllers"), "utf8").trim().split(/\s+/).filter(Boolean);
  } catch {
    return [];
  }
}

/** Every v1 controller a kernel may offer (cgroups(7)). */
const ALL_V1_CONTROLLERS = new Set(["blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "hugetlb", "memory", "misc", "net_cls", "net_prio", "perf_event", "pids", "rdma"]);

/** What identifies a v1 hierarchy: its controllers, or its name ("name=systemd") when it has none. */
function hierarchyKey(mount: Mount): string {
  return mount.superOptions.filter((option) => ALL_V1_CONTROLLERS.has(option) || option.startsWith("name=")).sort().join(",");
}

export function detectCgroups(mountinfo = "/proc/self/mountinfo"): CgroupLayout {
  let mounts: Mount[];
  try {
    mounts = parseMountinfo(readFileSync(mountinfo, "utf8"));
  } catch (err) {
    return { mode: "none", reason: `cannot read ${mountinfo}: ${(err as Error).message}` };
  }
  const v2Mounts = mounts.filter((m) => m.fsType === "cgroup2");
  for (const mount of v2Mounts) {
    const controllers = readControllers(mount.mountPoint);
    if (controllers.includes("memory")) return { mode: "v2", mount: mount.mountPoint, controllers };
  }
  const v1: Partial<Record<V1Controller, string>> = {};
  const hierarchies = new Map<string, string>();
  for (const mount of mounts.filter((m) => m.fsType === "cgroup")) {
    // The same hierarchy can be mounted twice (a bind); its first mount point serves.
    const key = hierarchyKey(mount);
    if (hierarchies.has(key)) continue;
    hierarchies.set(key, mount.mountPoint);
    for (const controller of V1_CONTROLLERS) {
      if (mount.superOptions.includes(controller) && !v1[controller]) v1[controller] = mount.mountPoint;
    }
  }
  if (!v1.memory) return { mode: "none", reason: "no cgroup v2 mount offers the memory controller and no cgroup v1 memory hierarchy is mounted" };
  const configured = new Set(Object.values(v1));
  const others = [...hierarchies.values()].filter((point) => !configured.has(point));
  const unified = v2Mounts[0]?.mountPoint;
  return { mode: "v1", mounts: v1, ...(others.length > 0 ? { others } : {}), ...(unified ? { unified } : {}) };
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
