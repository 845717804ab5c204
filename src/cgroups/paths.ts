/**
 * Where a task's cgroup lives. The path depends only on the host's layout,
 * the configured parent (client.cgroup_parent) and the task's identity, so an
 * agent that lost every handle can still find a task's cgroup and empty it.
 *
 *   v1: <mount of each hierarchy>/<parent>/<alloc id>.<task>   (every hierarchy the host
 *       mounts, and on a hybrid host its v2 tree too, at the same relative path)
 *   v2: <mount>/<parent>.slice/<alloc id>.<task>.scope
 *
 * The paths travel in launch requests and driver handles, so their shape is a
 * schema.
 */
import * as v from "valibot";
import type { CgroupLayout } from "./detect.ts";

const Dir = v.pipe(v.string(), v.startsWith("/", "must be an absolute path"));

export const CgroupPathsSchema = v.variant("version", [
  v.object({
    version: v.literal("v1"),
    /** Each configured controller's directory; memory is the one every descendant is spawned into. */
    dirs: v.object({
      memory: Dir,
      cpu: v.optional(Dir),
      cpuacct: v.optional(Dir),
      pids: v.optional(Dir),
      freezer: v.optional(Dir),
      cpuset: v.optional(Dir),
      devices: v.optional(Dir),
      blkio: v.optional(Dir),
    }),
    /** The task's directory in every other v1 hierarchy (named ones included): placement only. */
    others: v.optional(v.array(Dir), () => []),
    /** On a hybrid host, the task's directory in the v2 tree: placement only. */
    unified: v.optional(Dir),
  }),
  v.object({ version: v.literal("v2"), dir: Dir }),
]);
export type CgroupPaths = v.InferOutput<typeof CgroupPathsSchema>;

/** A cgroup name part: anything but letters, digits, "_", "." and "-" is %-escaped, byte by byte in UTF-8 (so it reads back). */
function escapeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/gu, (char) => [...Buffer.from(char)].map((byte) => `%${byte.toString(16).padStart(2, "0")}`).join(""));
}

/** The task a leaf's name stands for ("<alloc id>.<task>", ".scope" on v2), or null for another name. */
export function taskOfLeaf(leaf: string): { allocId: string; taskName: string } | null {
  // Alloc ids are UUIDs (the alloc dir allows hex and dashes only), so neither "drover.slice" nor "cgroup.procs" reads as a task.
  const match = /^([0-9a-f-]{8,})\.(.+?)(?:\.scope)?$/.exec(leaf);
  if (!match) return null;
  try {
    return { allocId: match[1]!, taskName: decodeURIComponent(match[2]!) };
  } catch {
    return null;
  }
}

/**
 * The directory in the v2 tree where tasks' cgroups live (a v2 host's slice,
 * a hybrid host's unified tree), or undefined on a v1 host without one.
 */
export function unifiedParentDir(layout: CgroupLayout, parent: string): string | undefined {
  if (layout.mode === "v2") return parentCgroupDirs(layout, parent)[0];
  if (layout.mode === "v1" && layout.unified) return `${layout.unified}/${normalizeParent(parent)}`;
  return undefined;
}

/** client.cgroup_parent as a relative path ("/drover" and "drover" are the same); throws on "..". */
export function normalizeParent(parent: string): string {
  const parts = parent.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.length === 0) throw new Error(`client.cgroup_parent "${parent}": must name a cgroup below the root`);
  if (parts.includes("..")) throw new Error(`client.cgroup_parent "${parent}": must not contain ".."`);
  return parts.join("/");
}

/** The parent's directories on this host (one per v1 hierarchy, or the v2 slice); tasks' cgroups live below. */
export function parentCgroupDirs(layout: CgroupLayout, parent: string): string[] {
  const relative = normalizeParent(parent);
  if (layout.mode === "v2") return [`${layout.mount}/${relative.endsWith(".slice") ? relative : `${relative}.slice`}`];
  if (layout.mode === "v1") return v1Mounts(layout).map((mount) => `${mount}/${relative}`);
  return [];
}

/** Every mount point a v1 layout places tasks under, each once. */
function v1Mounts(layout: Extract<CgroupLayout, { mode: "v1" }>): string[] {
  return [...new Set([...Object.values(layout.mounts), ...(layout.others ?? []), ...(layout.unified ? [layout.unified] : [])])];
}

/**
 * Where a task is placed on a v1 host: "isolated" (exec) in every hierarchy,
 * so its cgroup namespace hides the host's tree everywhere, with the devices
 * allow-list; "accounting" (raw_exec, whose tasks are not isolated and may
 * need any device) in the hierarchies that limit, measure and freeze, and the
 * v2 tree (the cgroup the API recognises a task's sockets by).
 */
export type CgroupPlacement = "isolated" | "accounting";

/** The task's cgroup paths on this host, or null when the host has no usable cgroups. */
export function taskCgroupPaths(layout: CgroupLayout, parent: string, allocId: string, taskName: string, placement: CgroupPlacement = "isolated"): CgroupPaths | null {
  const leaf = `${escapeName(allocId)}.${escapeName(taskName)}`;
  const relative = normalizeParent(parent);
  if (layout.mode === "v2") return { version: "v2", dir: `${parentCgroupDirs(layout, parent)[0]!}/${leaf}.scope` };
  if (layout.mode === "v1" && layout.mounts.memory) {
    const at = (mount: string | undefined) => (mount ? `${mount}/${relative}/${leaf}` : undefined);
    const { memory, cpu, cpuacct, pids, freezer, cpuset, devices, blkio } = layout.mounts;
    const unified = layout.unified ? { unified: at(layout.unified)! } : {};
    if (placement === "accounting") return { version: "v1", dirs: { memory: at(memory)!, cpu: at(cpu), cpuacct: at(cpuacct), pids: at(pids), freezer: at(freezer) }, others: [], ...unified };
    return {
      version: "v1",
      dirs: { memory: at(memory)!, cpu: at(cpu), cpuacct: at(cpuacct), pids: at(pids), freezer: at(freezer), cpuset: at(cpuset), devices: at(devices), blkio: at(blkio) },
      others: (layout.others ?? []).map((mount) => at(mount)!),
      ...unified,
    };
  }
  return null;
}

/** Every distinct directory of the task's cgroup (co-mounted v1 controllers share one), memory's first. */
export function cgroupDirs(paths: CgroupPaths): string[] {
  if (paths.version === "v2") return [paths.dir];
  const configured = Object.values(paths.dirs).filter((dir): dir is string => dir !== undefined);
  return [...new Set([...configured, ...paths.others, ...(paths.unified ? [paths.unified] : [])])];
}

/**
 * The task's directory in the v2 tree, if it has one (a v2 host, or a hybrid
 * host's unified tree): the cgroup a socket the task opens is tagged with.
 */
export function unifiedDir(paths: CgroupPaths): string | undefined {
  return paths.version === "v2" ? paths.dir : paths.unified;
}
