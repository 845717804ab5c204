/**
 * Publishes each running task's usage as Nomad's `nomad.client.allocs.*`
 * gauges (telemetry.publish_allocation_metrics), labelled like Nomad's; a
 * task's series are removed when it stops, so finished allocs leave nothing.
 */
import type { TaskResourceUsage } from "../stats/task.ts";
import type { Allocation } from "../structs/alloc.ts";
import type { Metrics } from "./registry.ts";

const LABELS = ["alloc_id", "task", "job", "task_group", "namespace"] as const;

export type PublishTaskUsage = (alloc: Allocation, task: string, usage: TaskResourceUsage | undefined) => void;

export function allocMetrics(metrics: Metrics): PublishTaskUsage {
  const memory = {
    RSS: metrics.gauge("nomad.client.allocs.memory.rss", "Resident memory of the task in bytes", LABELS),
    Cache: metrics.gauge("nomad.client.allocs.memory.cache", "Page cache charged to the task in bytes", LABELS),
    Swap: metrics.gauge("nomad.client.allocs.memory.swap", "Swap used by the task in bytes", LABELS),
    Usage: metrics.gauge("nomad.client.allocs.memory.usage", "Memory charged to the task's cgroup in bytes", LABELS),
    MaxUsage: metrics.gauge("nomad.client.allocs.memory.max_usage", "Peak memory charged to the task's cgroup in bytes", LABELS),
  };
  const cpu = {
    Percent: metrics.gauge("nomad.client.allocs.cpu.total_percent", "Percent of one core the task used", LABELS),
    SystemMode: metrics.gauge("nomad.client.allocs.cpu.system", "Percent of one core the task used in kernel mode", LABELS),
    UserMode: metrics.gauge("nomad.client.allocs.cpu.user", "Percent of one core the task used in user mode", LABELS),
    TotalTicks: metrics.gauge("nomad.client.allocs.cpu.total_ticks", "CPU the task used, in MHz", LABELS),
    ThrottledPeriods: metrics.gauge("nomad.client.allocs.cpu.throttled_periods", "Periods the task was throttled", LABELS),
    ThrottledTime: metrics.gauge("nomad.client.allocs.cpu.throttled_time", "Time the task was throttled, in nanoseconds", LABELS),
  };
  return (alloc, task, usage) => {
    const labels = { alloc_id: alloc.ID, task, job: alloc.JobID, task_group: alloc.TaskGroup, namespace: alloc.Namespace };
    for (const [field, gauge] of Object.entries(memory)) {
      if (usage) gauge.set(labels, usage.ResourceUsage.MemoryStats[field as keyof typeof memory]);
      else gauge.remove(labels);
    }
    for (const [field, gauge] of Object.entries(cpu)) {
      if (usage) gauge.set(labels, usage.ResourceUsage.CpuStats[field as keyof typeof cpu]);
      else gauge.remove(labels);
    }
  };
}
