/** Disk facts for the volume that holds the alloc dirs, under Nomad's attribute names. */
import { diskUsage } from "../../stats/disk.ts";

export interface VolumeFacts {
  totalBytes: number;
  freeBytes: number;
}

export function volumeFacts(path: string): VolumeFacts {
  const usage = diskUsage(path);
  return { totalBytes: usage.Size, freeBytes: usage.Available };
}

export function storageAttributes(path: string, facts: VolumeFacts): Record<string, string> {
  return {
    "unique.storage.volume": path,
    "unique.storage.bytestotal": String(facts.totalBytes),
    "unique.storage.bytesfree": String(facts.freeBytes),
  };
}
