/**
 * The rules of a job that span fields (Nomad's Job/TaskGroup/Task Validate):
 * unique names, one leader, ports, the restart policy's arithmetic, log
 * storage against the group's disk. Each problem carries the path of the
 * field it is about, so it can be named in the operator's own spelling.
 */
import { formatDuration } from "../lib/duration.ts";
import { isSignal } from "../lib/signals.ts";
import { NS_PER_MS } from "../lib/units.ts";
import type { Job, RestartPolicy, TaskGroup } from "../structs/job.ts";
import { nameProblem, taskNameProblem } from "../structs/names.ts";
import type { PathSegment } from "./paths.ts";

export interface Problem {
  path: PathSegment[];
  message: string;
}

/** Nomad's RestartPolicyMinInterval: a shorter window makes `attempts` meaningless. */
const RESTART_MIN_INTERVAL_NS = 5_000 * NS_PER_MS;


const ns = (value: number) => formatDuration(value / NS_PER_MS);

function restartProblems(policy: RestartPolicy, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  if (policy.Attempts === 0 && policy.Mode !== "fail") {
    problems.push({ path: [...path, "Attempts"], message: `restart mode "${policy.Mode}" with 0 attempts is ambiguous (use mode "fail")` });
  }
  if (policy.Interval < RESTART_MIN_INTERVAL_NS) {
    problems.push({ path: [...path, "Interval"], message: `must be at least ${ns(RESTART_MIN_INTERVAL_NS)} (got ${ns(policy.Interval)})` });
  } else if (policy.Attempts * policy.Delay > policy.Interval) {
    problems.push({
      path,
      message: `${policy.Attempts} restarts with a delay of ${ns(policy.Delay)} do not fit in an interval of ${ns(policy.Interval)}`,
    });
  }
  return problems;
}

function duplicates(names: readonly string[]): string[] {
  return [...new Set(names.filter((name, i) => names.indexOf(name) !== i))];
}

function groupProblems(group: TaskGroup, at: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  const groupName = nameProblem(group.Name);
  if (groupName) problems.push({ path: [...at, "Name"], message: groupName });
  for (const name of duplicates(group.Tasks.map((task) => task.Name))) {
    problems.push({ path: [...at, "Tasks"], message: `task "${name}" is defined more than once` });
  }
  if (group.Tasks.filter((task) => task.Leader).length > 1) {
    problems.push({ path: [...at, "Tasks"], message: "only one task may be the leader" });
  }
  if (group.Networks.length > 1) problems.push({ path: [...at, "Networks"], message: "only one network block is allowed" });
  group.Networks.forEach((network, n) => {
    if (network.Mode !== "none") return;
    if (network.ReservedPorts.length + network.DynamicPorts.length > 0) {
      problems.push({ path: [...at, "Networks", n, "Mode"], message: 'ports need network mode "host": with mode "none" nothing can reach them' });
    }
    for (const task of group.Tasks.filter((t) => t.Driver !== "exec")) {
      problems.push({
        path: [...at, "Networks", n, "Mode"],
        message: `network mode "none" needs the exec driver: task "${task.Name}" uses ${task.Driver}, which cannot isolate its network`,
      });
    }
  });

  const ports = group.Networks.flatMap((network) => [...network.ReservedPorts, ...network.DynamicPorts]);
  for (const label of duplicates(ports.map((port) => port.Label))) {
    problems.push({ path: [...at, "Networks"], message: `port "${label}" is defined more than once` });
  }
  group.Networks.forEach((network, n) =>
    network.ReservedPorts.forEach((port, p) => {
      if (port.Value < 1) problems.push({ path: [...at, "Networks", n, "ReservedPorts", p, "Value"], message: "a static port must be 1-65535" });
    }),
  );
  const statics = group.Networks.flatMap((network) => network.ReservedPorts.map((port) => String(port.Value)));
  for (const value of duplicates(statics)) {
    problems.push({ path: [...at, "Networks"], message: `static port ${value} is reserved more than once` });
  }

  let logStorageMb = 0;
  group.Tasks.forEach((task, t) => {
    const path = [...at, "Tasks", t];
    const taskName = taskNameProblem(task.Name);
    if (taskName) problems.push({ path: [...path, "Name"], message: taskName });
    problems.push(...restartProblems(task.RestartPolicy, [...path, "RestartPolicy"]));
    if (task.Resources.MemoryMaxMB !== 0 && task.Resources.MemoryMaxMB < task.Resources.MemoryMB) {
      problems.push({
        path: [...path, "Resources", "MemoryMaxMB"],
        message: `must be at least memory (${task.Resources.MemoryMB} MB) or unset (got ${task.Resources.MemoryMaxMB})`,
      });
    }
    if (task.KillSignal !== "" && !isSignal(task.KillSignal)) {
      problems.push({ path: [...path, "KillSignal"], message: `unknown signal "${task.KillSignal}"` });
    }
    logStorageMb += task.LogConfig.MaxFiles * task.LogConfig.MaxFileSizeMB;
  });
  if (logStorageMb >= group.EphemeralDisk.SizeMB) {
    problems.push({
      path: [...at, "EphemeralDisk", "SizeMB"],
      message: `log storage (${logStorageMb} MB: max_files x max_file_size summed over the tasks) must be less than the ephemeral disk (${group.EphemeralDisk.SizeMB} MB)`,
    });
  }
  return problems;
}

export function validateJob(job: Job): Problem[] {
  const problems: Problem[] = [];
  if (/\s|\x00/.test(job.ID)) problems.push({ path: ["ID"], message: "must not contain whitespace or NUL" });
  for (const name of duplicates(job.TaskGroups.map((group) => group.Name))) {
    problems.push({ path: ["TaskGroups"], message: `group "${name}" is defined more than once` });
  }
  job.TaskGroups.forEach((group, g) => problems.push(...groupProblems(group, ["TaskGroups", g])));
  return problems;
}
