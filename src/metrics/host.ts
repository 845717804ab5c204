/** Publishes host stats as Nomad's `nomad.client.host.*` gauges. */
import type { HostStats } from "../stats/host.ts";
import type { Metrics } from "./registry.ts";

export function hostMetrics(metrics: Metrics): (stats: HostStats) => void {
  const memory = {
    total: metrics.gauge("nomad.client.host.memory.total", "Total memory of the host in bytes"),
    available: metrics.gauge("nomad.client.host.memory.available", "Memory available for new processes in bytes"),
    used: metrics.gauge("nomad.client.host.memory.used", "Memory in use in bytes"),
    free: metrics.gauge("nomad.client.host.memory.free", "Free memory in bytes"),
  };
  const cpu = {
    user: metrics.gauge("nomad.client.host.cpu.user", "Percent of the core's time in user mode", ["cpu"]),
    system: metrics.gauge("nomad.client.host.cpu.system", "Percent of the core's time in kernel mode", ["cpu"]),
    idle: metrics.gauge("nomad.client.host.cpu.idle", "Percent of the core's time idle", ["cpu"]),
    total: metrics.gauge("nomad.client.host.cpu.total", "Percent of the core's time busy", ["cpu"]),
  };
  const disk = {
    size: metrics.gauge("nomad.client.host.disk.size", "Size of the file system in bytes", ["disk"]),
    used: metrics.gauge("nomad.client.host.disk.used", "Bytes used", ["disk"]),
    available: metrics.gauge("nomad.client.host.disk.available", "Bytes available", ["disk"]),
    usedPercent: metrics.gauge("nomad.client.host.disk.used_percent", "Percent of the space used", ["disk"]),
    inodesPercent: metrics.gauge("nomad.client.host.disk.inodes_percent", "Percent of the inodes used", ["disk"]),
  };
  const uptime = metrics.gauge("nomad.client.uptime", "Seconds since the host booted");

  return (stats) => {
    memory.total.set(stats.Memory.Total);
    memory.available.set(stats.Memory.Available);
    memory.used.set(stats.Memory.Used);
    memory.free.set(stats.Memory.Free);
    for (const core of stats.CPU) {
      cpu.user.set({ cpu: core.CPU }, core.User);
      cpu.system.set({ cpu: core.CPU }, core.System);
      cpu.idle.set({ cpu: core.CPU }, core.Idle);
      cpu.total.set({ cpu: core.CPU }, core.Total);
    }
    for (const entry of stats.DiskStats) {
      const labels = { disk: entry.Device };
      disk.size.set(labels, entry.Size);
      disk.used.set(labels, entry.Used);
      disk.available.set(labels, entry.Available);
      disk.usedPercent.set(labels, entry.UsedPercent);
      disk.inodesPercent.set(labels, entry.InodesUsedPercent);
    }
    uptime.set(stats.Uptime);
  };
}
