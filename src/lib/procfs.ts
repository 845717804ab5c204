/** Readers for the /proc files more than one part of drover needs. */
import { readFileSync } from "node:fs";

/** /proc/meminfo as name -> bytes ("MemTotal: 16 kB" -> MemTotal -> 16384). */
export function parseMeminfo(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([\w()]+):\s+(\d+)(\s+kB)?$/.exec(line.trim());
    if (match) out.set(match[1]!, Number(match[2]) * (match[3] ? 1024 : 1));
  }
  return out;
}

export function readMeminfo(path = "/proc/meminfo"): Map<string, number> {
  return parseMeminfo(readFileSync(path, "utf8"));
}

export interface Mount {
  /** The directory of its file system the mount shows ("/" unless a bind mount). */
  root: string;
  mountPoint: string;
  /** This mount's own options ("ro", "nosuid", "nodev", ...). */
  options: string[];
  fsType: string;
  superOptions: string[];
}

/** Parses /proc/self/mountinfo (proc(5)). */
export function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split("\n")) {
    if (!line) continue;
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const [fsType, , superOptions] = right.split(" ");
    const mountPoint = fields[4];
    if (!mountPoint || !fsType) continue;
    mounts.push({ root: unescapeMount(fields[3] ?? "/"), mountPoint: unescapeMount(mountPoint), options: (fields[5] ?? "").split(","), fsType, superOptions: (superOptions ?? "").split(",") });
  }
  return mounts;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Mount points at or under `path` in this process's mount namespace, deepest first. */
export function mountsUnder(path: string, mountinfo = "/proc/self/mountinfo"): string[] {
  return pointsUnder(
    parseMountinfo(readFileSync(mountinfo, "utf8")).map((mount) => mount.mountPoint),
    path,
  );
}

/** Those of mount points `points` at or under `path`, deepest first (the order they detach in). */
export function pointsUnder(points: readonly string[], path: string): string[] {
  const prefix = `${path}/`;
  return points.filter((point) => point === path || point.startsWith(prefix)).sort((a, b) => b.length - a.length);
}
