/** Space and inode use of the file system holding a path, in Nomad's DiskStats shape. */
import { statfsSync } from "node:fs";

export interface DiskStats {
  Device: string;
  Mountpoint: string;
  Size: number;
  Used: number;
  Available: number;
  UsedPercent: number;
  InodesUsedPercent: number;
}

export function diskUsage(path: string): Omit<DiskStats, "Device" | "Mountpoint"> {
  const fs = statfsSync(path);
  const size = fs.blocks * fs.bsize;
  const used = (fs.blocks - fs.bfree) * fs.bsize;
  const available = fs.bavail * fs.bsize;
  return {
    Size: size,
    Used: used,
    Available: available,
    // As df counts it: blocks reserved for root are neither used nor available.
    UsedPercent: used + available > 0 ? (used / (used + available)) * 100 : 0,
    InodesUsedPercent: fs.files > 0 ? ((fs.files - fs.ffree) / fs.files) * 100 : 0,
  };
}
