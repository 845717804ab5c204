/**
 * Port bookkeeping for one node: which host ports are taken (the node's
 * reserved list, the ports of every alloc still holding its resources, and
 * for dynamic picks whatever the host has bound) and handing out a group's
 * static and dynamic ports without ever giving one port twice.
 */
import type { Port } from "../../structs/job.ts";

/**
 * Random picks before scanning the range in order. Random first spreads
 * ports out (a just-freed port is not handed straight to the next task, as
 * Nomad does); the scan makes a free port certain to be found.
 */
const RANDOM_PORT_ATTEMPTS = 20;

export interface PortRange {
  min: number;
  max: number;
}

export type PortAssignment = { ok: true; reserved: Port[]; dynamic: Port[] } | { ok: false; dimension: string };

export class PortLedger {
  private readonly taken: Set<number>;

  constructor(
    taken: Iterable<number>,
    /** Bound by something else on the host: skipped for dynamic ports only. */
    private readonly hostBound: ReadonlySet<number>,
    private readonly range: PortRange,
  ) {
    this.taken = new Set(taken);
  }

  /** Assigns a group's ports; on success they are taken, on failure nothing is. */
  assign(reserved: readonly Port[], dynamic: readonly Port[]): PortAssignment {
    for (const port of reserved) {
      if (this.taken.has(port.Value)) return { ok: false, dimension: `network: reserved port collision ${port.Label}=${port.Value}` };
    }
    const picked = new Set<number>(reserved.map((port) => port.Value));
    const dynamicOut: Port[] = [];
    for (const port of dynamic) {
      const value = this.pick(picked);
      if (value === undefined) return { ok: false, dimension: "network: dynamic port selection failed" };
      picked.add(value);
      dynamicOut.push({ ...port, Value: value });
    }
    for (const value of picked) this.taken.add(value);
    return { ok: true, reserved: reserved.map((port) => ({ ...port })), dynamic: dynamicOut };
  }

  private free(port: number, picked: ReadonlySet<number>): boolean {
    return !this.taken.has(port) && !this.hostBound.has(port) && !picked.has(port);
  }

  private pick(picked: ReadonlySet<number>): number | undefined {
    const { min, max } = this.range;
    const span = max - min + 1;
    if (span <= 0) return undefined;
    for (let attempt = 0; attempt < RANDOM_PORT_ATTEMPTS; attempt++) {
      const port = min + Math.floor(Math.random() * span);
      if (this.free(port, picked)) return port;
    }
    const start = Math.floor(Math.random() * span);
    for (let offset = 0; offset < span; offset++) {
      const port = min + ((start + offset) % span);
      if (this.free(port, picked)) return port;
    }
    return undefined;
  }
}
