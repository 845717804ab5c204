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
