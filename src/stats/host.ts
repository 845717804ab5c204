/**
 * Host resource usage in Nomad's HostStats shape (GET /v1/client/stats).
 * CPU percentages need two readings of /proc/stat, so the collector keeps the
 * previous one and the agent samples it every telemetry.collection_interval;
 * the API serves the latest sample.
 */
import { readFileSync } from "node:fs";
import { parseMountinfo, readMeminfo } from "../lib/procfs.ts";
import { diskUsage, type DiskStats } from "./disk.ts";

export interface HostCpuStats {
  CPU: string;
  User: number;
  System: number;
  Idle: number;
  Total: number;
}

export interface HostStats {
  Memory: { Total: number; Available: number; Used: number; Free: number };
  CPU: HostCpuStats[];
  CPUTicksConsumed: number;
  DiskStats: DiskStats[];
  AllocDirStats: DiskStats | null;
  /** Device plugins' statistics (DeviceGroupStats), which the agent adds; null without devices, as Nomad has it. */
  DeviceStats: unknown[] | null;
  Uptime: number;
  Timestamp: number;
}

interface CpuTimes {
  name: string;
  busyUser: number;
  busySystem: number;
  idle: number;
  total: number;
}

/** Per-core jiffies from /proc/stat ("cpu0 user nice system idle iowait irq softirq steal ..."). */
export function parseProcStat(text: string): CpuTimes[] {
  const out: CpuTimes[] = [];
  for (const line of text.split("\n")) {
    const match = /^(cpu\d+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = match[2]!
      .trim()
      .split(/\s+/)
      .map(Number);
    out.push({
      name: match[1]!,
      busyUser: user + nice,
      busySystem: system + irq + softirq,
      idle: idle + iowait,
      total: user + nice + system + idle + iowait + irq + softirq + steal,
    });
  }
  return out;
}

/** Percentages of each core's time between two readings. */
export function cpuPercentages(before: CpuTimes[], after: CpuTimes[]): HostCpuStats[] {
  return after.map((now) => {
    const then = before.find((cpu) => cpu.name === now.name);
    const span = then ? now.total - then.total : 0;
    if (!then || span <= 0) return { CPU: now.name, User: 0, System: 0, Idle: 100, Total: 0 };
    const user = ((now.busyUser - then.busyUser) / span) * 100;
    const system = ((now.busySystem - then.busySystem) / span) * 100;
    const idle = ((now.idle - then.idle) / span) * 100;
    return { CPU: now.name, User: user, System: system, Idle: idle, Total: 100 - idle };
  });
}

function physicalMounts(): { device: string; mountPoint: string }[] {
  const text = readFileSync("/proc/self/mountinfo", "utf8");
  const seen = new Set<string>();
  const out: { device: string; mountPoint: string }[] = [];
  for (const line of text.split("\n")) {
    const right = line.split(" - ")[1];
    const source = right?.split(" ")[1];
    if (!source?.startsWith("/dev/") || seen.has(source)) continue;
    const mount = parseMountinfo(line)[0];
    if (!mount) continue;
    seen.add(source);
    out.push({ device: source, mountPoint: mount.mountPoint });
  }
  return out;
}

/**
 * How long the list of disks is reused before the mount table is read again.
 * Disks come and go rarely, while the mount table grows with every task's
 * secrets tmpfs: reading it on every sample cost more than the rest together.
 */
export const DISK_LIST_REFRESH_MS = 60_000;

export class HostStatsCollector {
  private previous: CpuTimes[];
  private current: HostStats;
  private disks: { list: { device: string; mountPoint: string }[]; readAt: number } | undefined;

  constructor(
    private readonly allocDir: string,
    /** MHz per core, to express CPU use in Nomad's ticks. */
    private readonly mhzPerCore: number,
  ) {
    this.previous = parseProcStat(readFileSync("/proc/stat", "utf8"));
    this.current = this.read(this.previous);
  }

  /** Takes a new reading; CPU figures cover the time since the previous one. */
  sample(): HostStats {
    const now = parseProcStat(readFileSync("/proc/stat", "utf8"));
    this.current = this.read(now);
    this.previous = now;
    return this.current;
  }

  latest(): HostStats {
    return this.current;
  }

  private diskList(): { device: string; mountPoint: string }[] {
    const now = Date.now();
    if (!this.disks || now - this.disks.readAt > DISK_LIST_REFRESH_MS) this.disks = { list: physicalMounts(), readAt: now };
    return this.disks.list;
  }

  private read(now: CpuTimes[]): HostStats {
    const meminfo = readMeminfo();
    const total = meminfo.get("MemTotal") ?? 0;
    const free = meminfo.get("MemFree") ?? 0;
    const cached = (meminfo.get("Cached") ?? 0) + (meminfo.get("SReclaimable") ?? 0);
    const cpus = cpuPercentages(this.previous, now);
    let allocDirStats: DiskStats | null = null;
    try {
      allocDirStats = { ...diskUsage(this.allocDir), Device: "", Mountpoint: "" };
    } catch {
      allocDirStats = null;
    }
    return {
      Memory: {
        Total: total,
        Available: meminfo.get("MemAvailable") ?? free,
        Used: Math.max(0, total - free - (meminfo.get("Buffers") ?? 0) - cached),
        Free: free,
      },
      CPU: cpus,
      CPUTicksConsumed: cpus.reduce((sum, cpu) => sum + (cpu.Total / 100) * this.mhzPerCore, 0),
      DiskStats: this.diskList().flatMap(({ device, mountPoint }) => {
        try {
          return [{ ...diskUsage(mountPoint), Device: device, Mountpoint: mountPoint }];
        } catch {
          return [];
        }
      }),
      AllocDirStats: allocDirStats,
      DeviceStats: null,
      Uptime: Math.floor(Number(readFileSync("/proc/uptime", "utf8").split(" ")[0])),
      Timestamp: Date.now() * 1e6,
    };
  }
}
