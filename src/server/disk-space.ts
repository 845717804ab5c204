/**
 * The free-space guard in front of new work: below MIN_FREE_DISK_BYTES on
 * the disk holding the server's state, or while the data dir's disk reserve
 * is spent (state/reserve.ts), registering a job (and so placing new allocs)
 * is refused with a message saying so, while stops and client reports on
 * running allocs still land. SQLite reports a disk that fills mid-write
 * itself (see state/store.ts).
 */
import { statfsSync } from "node:fs";
import type { DiskReserve } from "../state/reserve.ts";
import { ServerError } from "./errors.ts";
import { BYTES_PER_MIB } from "../lib/units.ts";

/** Room kept for the state DB and its WAL so running allocs can still be reported. */
export const MIN_FREE_DISK_BYTES = 16 * BYTES_PER_MIB;

export function statfsFreeBytes(path: string): () => number {
  return () => {
    const fs = statfsSync(path);
    return fs.bavail * fs.bsize;
  };
}

export function freeSpaceGuard(path: string, freeBytes: () => number, reserve?: DiskReserve): (action: string) => void {
  return (action) => {
    const mb = (bytes: number) => `${Math.floor(bytes / BYTES_PER_MIB)} MB`;
    if (reserve && !reserve.held) {
      throw new ServerError(
        "storage-full",
        `cannot ${action}: the disk holding ${path} filled up and the agent is using its ${mb(reserve.bytes)} reserve to stop work; ` +
          "nothing was changed (free some space: the reserve is restored, and new work accepted, once there is room)",
      );
    }
    const free = freeBytes();
    if (free >= MIN_FREE_DISK_BYTES) return;
    throw new ServerError(
      "storage-full",
      `cannot ${action}: only ${mb(free)} free on the disk holding ${path} ` +
        `(the server keeps ${mb(MIN_FREE_DISK_BYTES)} free for its state); nothing was changed`,
    );
  };
}
