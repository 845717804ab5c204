/**
 * Watches the disk that holds the data dir, for the operator and for the
 * disk reserve (state/reserve.ts):
 *
 *   every DISK_WATCH_INTERVAL_MS:
 *     reserve spent, or free < MIN_FREE_DISK_BYTES ──> degraded (health not ok; one WARN)
 *     reserve spent and free >= reserve + MIN_FREE_DISK_BYTES ──> recreate it ──> ok (one INFO)
 *
 * A statfs that fails is reported the same way: the state disk cannot be trusted.
 */
import type { Logger } from "../lib/logger.ts";
import { intervalService, type Service } from "../lib/service.ts";
import { BYTES_PER_MIB } from "../lib/units.ts";
import { MIN_FREE_DISK_BYTES } from "../server/disk-space.ts";
import type { DiskReserve } from "../state/reserve.ts";

/** Often enough that health says "degraded" within seconds of a disk filling; a statfs costs microseconds. */
export const DISK_WATCH_INTERVAL_MS = 2_000;

export interface DiskHealth {
  ok: boolean;
  message: string;
}

export class DiskWatch {
  private current: DiskHealth = { ok: true, message: "ok" };

  constructor(
    private readonly dir: string,
    private readonly reserve: DiskReserve,
    private readonly freeBytes: () => number,
    private readonly logger: Logger,
  ) {}

  get health(): DiskHealth {
    return this.current;
  }

  check(): DiskHealth {
    let next: DiskHealth;
    try {
      const free = this.freeBytes();
      if (!this.reserve.held && free >= this.reserve.bytes + MIN_FREE_DISK_BYTES) this.reserve.ensure();
      const mb = (bytes: number) => `${Math.floor(bytes / BYTES_PER_MIB)} MB`;
      if (!this.reserve.held) {
        next = { ok: false, message: `degraded: the disk holding ${this.dir} filled up (${mb(free)} free); its reserve is spent and new work is refused` };
      } else if (free < MIN_FREE_DISK_BYTES) {
        next = { ok: false, message: `degraded: the disk holding ${this.dir} is nearly full (${mb(free)} free); new work is refused` };
      } else {
        next = { ok: true, message: "ok" };
      }
    } catch (err) {
      next = { ok: false, message: `degraded: cannot read the free space of ${this.dir}: ${(err as Error).message}` };
    }
    if (next.ok !== this.current.ok) {
      if (next.ok) this.logger.info({ dir: this.dir }, "the data dir's disk has room again; new work is accepted");
      else this.logger.warn({ dir: this.dir, reason: next.message }, "the data dir's disk is full or failing");
    }
    this.current = next;
    return next;
  }

  service(intervalMs = DISK_WATCH_INTERVAL_MS): Service {
    return intervalService("disk-watch", intervalMs, () => void this.check());
  }
}
