/**
 * The rules of a job that span fields (Nomad's Job/TaskGroup/Task Validate):
 * unique names, one leader, ports, the restart policy's arithmetic, log
 * storage against the group's disk. Each problem carries the path of the
 * field it is about, so it can be named in the operator's own spelling.
 */
import { formatDuration } from "../lib/duration.ts";
import { isSignal } from "../lib/signals.ts";
import { NS_PER_MS } from "../lib/units.ts";
import { volumeTaskPath } from "../lib/volume-paths.ts";
import * as v from "valibot";
import { driverConfigSchema, isKnownDriver } from "../structs/driver-config.ts";
import { CHECK_TYPES, ON_UPDATE_MODES, SERVICE_PROVIDERS, TEMPLATE_CHANGE_MODES, type Job, type RestartPolicy, type Service, type Task, type TaskGroup } from "../structs/job.ts";
import { MAX_CPU_MHZ, MAX_DISK_MB, MAX_GROUP_COUNT, MAX_JOB_COUNT, MAX_MEMORY_MB } from "../structs/limits.ts";
import { envEntryProblem, jobIdProblem, jobNameProblem, nameProblem, taskNameProblem, userProblem } from "../structs/names.ts";
import { DEVICE_OPERATORS, UNARY_OPERATORS, type RequestedDevice } from "../structs/device.ts";
import type { PathSegment } from "./paths.ts";
import { placementProblems } from "./validate-placement.ts";
import { schedulingProblems } from "./validate-scheduling.ts";
import { taskIdentityProblems } from "./validate-identity.ts";
import { volumeProblems } from "./validate-volumes.ts";

export interface Problem {
  path: PathSegment[];
  message: string;
}

/** Nomad's RestartPolicyMinInterval: a shorter window makes `attempts` meaningless. */
const RESTART_MIN_INTERVAL_NS = 5_000 * NS_PER_MS;


/** Nomad's minimum check interval and timeout: anything shorter floods the task. */
const MIN_CHECK_INTERVAL_NS = 1_000 * NS_PER_MS;

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

/** Nomad's Service.Validate and ServiceCheck.validate, for what a job states on its own. */
function serviceProblems(service: Service, ports: ReadonlySet<string>, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  if (!/^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/.test(service.Name.replace(/\$\{[^}]*\}/g, "x"))) {
    problems.push({ path: [...path, "Name"], message: `service name "${service.Name}" must be a valid hostname label (letters, digits, dashes; at most 63)` });
  }
  if (service.PortLabel !== "" && !/^\d+$/.test(service.PortLabel) && !ports.has(service.PortLabel)) {
    problems.push({ path: [...path, "PortLabel"], message: `port label "${service.PortLabel}" is not a port of the group's network` });
  }
  problems.push(...onUpdateProblems(service.OnUpdate, [...path, "OnUpdate"]));
  if (!(SERVICE_PROVIDERS as readonly string[]).includes(service.Provider)) {
    problems.push({ path: [...path, "Provider"], message: `service provider must be ${SERVICE_PROVIDERS.map((p) => `"${p}"`).join(" or ")}, not "${service.Provider}"` });
  } else if (service.Provider === "nomad" && service.Connect) {
    problems.push({ path: [...path, "Connect"], message: 'a service with provider "nomad" cannot have a connect block' });
  }
  service.Checks.forEach((check, c) => {
    const at = [...path, "Checks", c];
    problems.push(...onUpdateProblems(check.OnUpdate, [...at, "OnUpdate"]));
    if (!(CHECK_TYPES as readonly string[]).includes(check.Type)) {
      problems.push({ path: [...at, "Type"], message: `check type "${check.Type}" is not one of ${CHECK_TYPES.join(", ")}` });
    }
    if (check.Interval < MIN_CHECK_INTERVAL_NS) problems.push({ path: [...at, "Interval"], message: `must be at least ${ns(MIN_CHECK_INTERVAL_NS)}` });
    if (check.Timeout < MIN_CHECK_INTERVAL_NS) problems.push({ path: [...at, "Timeout"], message: `must be at least ${ns(MIN_CHECK_INTERVAL_NS)}` });
    if (check.Type === "http" && check.Path === "") problems.push({ path: [...at, "Path"], message: "an http check needs a path" });
    if (check.Type === "script" && check.Command === "") problems.push({ path: [...at, "Command"], message: "a script check needs a command" });
    if (check.PortLabel !== "" && !/^\d+$/.test(check.PortLabel) && !ports.has(check.PortLabel)) {
      problems.push({ path: [...at, "PortLabel"], message: `port label "${check.PortLabel}" is not a port of the group's network` });
    }
  });
  return problems;
}

/** Nomad's check on_update values. */
function onUpdateProblems(value: string, path: PathSegment[]): Problem[] {
  if ((ON_UPDATE_MODES as readonly string[]).includes(value)) return [];
  return [{ path, message: `on_update must be one of ${ON_UPDATE_MODES.join(", ")} (got "${value}")` }];
}

/** Nomad's affinity weight range; 0 would weigh nothing. */
const AFFINITY_WEIGHT_LIMIT = 100;
/** What a device constraint's targets may name (Nomad's resolveDeviceTarget); anything else never resolves. */
const DEVICE_TARGET = /^\$\{device\.(?:model|vendor|type|attr\.[^}]+)\}$/;
/** Operators Nomad has for nodes only. */
const NODE_ONLY_OPERATORS = new Set(["distinct_hosts", "distinct_property"]);
/** Operators Nomad has on devices that drover's placement does not evaluate. */
const VERSION_OPERATORS = new Set(["version", "semver"]);

type DeviceRule = RequestedDevice["Constraints"][number] | RequestedDevice["Affinities"][number];

/** Nomad's RequestedDevice.Validate: each constraint and affinity compares device targets with an operator it has for devices. */
function deviceRuleProblems(rule: DeviceRule, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  const operand = rule.Operand;
  if (NODE_ONLY_OPERATORS.has(operand)) {
    problems.push({ path: [...path, "Operand"], message: `operator "${operand}" applies to nodes, not to devices` });
  } else if (VERSION_OPERATORS.has(operand)) {
    problems.push({ path: [...path, "Operand"], message: `operator "${operand}" is not supported by drover on devices (use =, <, >=, regexp, ...)` });
  } else if (!(DEVICE_OPERATORS as readonly string[]).includes(operand)) {
    problems.push({ path: [...path, "Operand"], message: `unknown operator "${operand}" (use one of ${DEVICE_OPERATORS.join(" ")})` });
  } else if (UNARY_OPERATORS.has(operand)) {
    if (rule.RTarget !== "") problems.push({ path: [...path, "RTarget"], message: `operator "${operand}" takes no value` });
  } else if (rule.RTarget === "") {
    problems.push({ path: [...path, "RTarget"], message: `operator "${operand}" needs a value` });
  } else if (operand === "regexp") {
    try {
      new RegExp(rule.RTarget);
    } catch (err) {
      problems.push({ path: [...path, "RTarget"], message: `invalid regular expression: ${(err as Error).message}` });
    }
  }
  if (rule.LTarget === "") problems.push({ path: [...path, "LTarget"], message: "must name what to compare (e.g. ${device.attr.memory})" });
  for (const key of ["LTarget", "RTarget"] as const) {
    const target = rule[key];
    if (target.includes("${") && !DEVICE_TARGET.test(target)) {
      problems.push({ path: [...path, key], message: `"${target}" is not a device target (use \${device.model}, \${device.vendor}, \${device.type} or \${device.attr.<name>})` });
    }
  }
  return problems;
}

function deviceProblems(device: RequestedDevice, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  const parts = device.Name.split("/");
  if (parts.length > 3 || parts.some((part) => part === "")) {
    // The path names the block, whose label is the name.
    problems.push({ path, message: `"${device.Name}" must be <type>, <vendor>/<type> or <vendor>/<type>/<name>` });
  }
  if (device.Count < 1) problems.push({ path: [...path, "Count"], message: "must be at least 1" });
  device.Constraints.forEach((constraint, c) => problems.push(...deviceRuleProblems(constraint, [...path, "Constraints", c])));
  device.Affinities.forEach((affinity, a) => {
    const at = [...path, "Affinities", a];
    problems.push(...deviceRuleProblems(affinity, at));
    if (affinity.Weight === 0 || Math.abs(affinity.Weight) > AFFINITY_WEIGHT_LIMIT) {
      problems.push({ path: [...at, "Weight"], message: `must be between -${AFFINITY_WEIGHT_LIMIT} and ${AFFINITY_WEIGHT_LIMIT}, and not 0 (got ${affinity.Weight})` });
    }
  });
  return problems;
}

/** Nomad's Task.Validate for templates, artifacts and volume mounts, and the config of a driver drover has. */
function taskBlockProblems(task: Task, group: TaskGroup, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  if (task.Driver === "") problems.push({ path: [...path, "Driver"], message: "is required" });
  task.Artifacts.forEach((artifact, a) => {
    if (artifact.GetterSource === "") problems.push({ path: [...path, "Artifacts", a, "GetterSource"], message: "is required" });
  });
  if (isKnownDriver(task.Driver)) {
    const config = v.safeParse(driverConfigSchema(task.Driver), task.Config);
    if (!config.success) {
      for (const issue of config.issues) {
        const key = issue.path?.map((item) => String(item.key)) ?? [];
        const unknown = issue.type === "strict_object" && issue.expected === "never";
        const message = unknown
          ? task.Driver === "docker"
            ? "unknown field (not one the docker driver takes on drover: see docs/docker-driver.md)"
            : `unknown field (the ${task.Driver} driver takes command and args)`
          : issue.received === "undefined"
            ? "is required"
            : issue.message;
        problems.push({ path: [...path, "Config", ...key], message });
      }
    }
  }
  if (task.Resources.Networks.length > 1) problems.push({ path: [...path, "Resources", "Networks"], message: "only one network block is allowed" });
  task.Resources.Devices.forEach((device, d) => problems.push(...deviceProblems(device, [...path, "Resources", "Devices", d])));
  task.Templates.forEach((template, t) => {
    const at = [...path, "Templates", t];
    if (template.SourcePath === "" && template.EmbeddedTmpl === "") problems.push({ path: at, message: "a template needs a source or data" });
    if (!(TEMPLATE_CHANGE_MODES as readonly string[]).includes(template.ChangeMode)) {
      problems.push({ path: [...at, "ChangeMode"], message: `must be one of ${TEMPLATE_CHANGE_MODES.join(", ")} (got "${template.ChangeMode}")` });
    }
    if (template.DestPath === "") problems.push({ path: [...at, "DestPath"], message: "is required" });
    if (template.ChangeMode === "signal" && (template.ChangeSignal === "" || !isSignal(template.ChangeSignal))) {
      problems.push({ path: [...at, "ChangeSignal"], message: `change_mode "signal" needs a known signal (got "${template.ChangeSignal}")` });
    }
    if (template.Wait?.Min != null && template.Wait.Max != null && template.Wait.Min > template.Wait.Max) {
      problems.push({ path: [...at, "Wait"], message: `wait min ${ns(template.Wait.Min)} is greater than max ${ns(template.Wait.Max)}` });
    }
    if (template.ChangeMode === "script" && (template.ChangeScript === null || template.ChangeScript.Command === "")) {
      problems.push({ path: [...at, "ChangeScript"], message: 'change_mode "script" needs a change_script block with a command' });
    }
  });
  for (const [field, list] of [["Templates", task.Templates.map((t) => t.DestPath)], ["Artifacts", task.Artifacts.map((a) => a.RelativeDest)]] as const) {
    list.forEach((dest, i) => {
      if (escapesTaskDir(dest)) problems.push({ path: [...path, field, i], message: `destination "${dest}" is outside the task directory` });
    });
  }
  task.VolumeMounts.forEach((mount, m) => {
    if (!(mount.Volume in group.Volumes)) problems.push({ path: [...path, "VolumeMounts", m, "Volume"], message: `volume "${mount.Volume}" is not a volume of the group` });
    if (mount.Destination === "") {
      problems.push({ path: [...path, "VolumeMounts", m, "Destination"], message: "is required" });
      return;
    }
    const place = volumeTaskPath(mount.Destination);
    if ("problem" in place) problems.push({ path: [...path, "VolumeMounts", m, "Destination"], message: place.problem });
  });
  return problems;
}

/** A relative path with enough ".." to climb out of the task dir (Nomad's escapingfs check). */
function escapesTaskDir(dest: string): boolean {
  let depth = 0;
  for (const part of dest.split("/")) {
    if (part === "..") depth -= 1;
    else if (part !== "" && part !== ".") depth += 1;
    if (depth < 0) return true;
  }
  return false;
}

function duplicates(names: readonly string[]): string[] {
  return [...new Set(names.filter((name, i) => names.indexOf(name) !== i))];
}

function groupProblems(job: Job, group: TaskGroup, at: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  const groupName = nameProblem(group.Name);
  if (groupName) problems.push({ path: [...at, "Name"], message: groupName });
  if (group.EphemeralDisk.SizeMB > MAX_DISK_MB) {
    problems.push({ path: [...at, "EphemeralDisk", "SizeMB"], message: `must be at most ${MAX_DISK_MB} MB (got ${group.EphemeralDisk.SizeMB})` });
  }
  if (group.Tasks.length === 0) problems.push({ path: [...at, "Tasks"], message: "a group needs at least one task" });
  for (const name of duplicates(group.Tasks.map((task) => task.Name))) {
    problems.push({ path: [...at, "Tasks"], message: `task "${name}" is defined more than once` });
  }
  if (group.Tasks.filter((task) => task.Leader).length > 1) {
    problems.push({ path: [...at, "Tasks"], message: "only one task may be the leader" });
  }
  if (group.Networks.length > 1) problems.push({ path: [...at, "Networks"], message: "only one network block is allowed" });
  // drover has no Docker bridge of its own: docker's "bridge" is the group's (drivers/network.ts).
  group.Tasks.forEach((task, t) => {
    if (task.Driver === "docker" && group.Networks[0]?.Mode !== "bridge" && task.Config.network_mode === "bridge") {
      problems.push({ path: [...at, "Tasks", t, "Config", "network_mode"], message: '"bridge" joins the group\'s bridge network: set network { mode = "bridge" } on the group' });
    }
  });
  group.Networks.forEach((network, n) => {
    // Nomad: the namespace's hostname is set by the docker driver alone, and only in bridge mode.
    if (network.Hostname !== "" && (network.Mode !== "bridge" || group.Tasks.some((task) => task.Driver !== "docker"))) {
      problems.push({ path: [...at, "Networks", n, "Hostname"], message: 'a group network hostname needs mode "bridge" and docker tasks only' });
    }
    if (network.Mode !== "none") return;
    if (network.ReservedPorts.length + network.DynamicPorts.length > 0) {
      problems.push({ path: [...at, "Networks", n, "Mode"], message: 'ports need network mode "host" or "bridge": with mode "none" nothing can reach them' });
    }
    for (const task of group.Tasks.filter((t) => t.Driver === "raw_exec")) {
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

  const portLabels = new Set([...ports, ...group.Tasks.flatMap((task) => task.Resources.Networks.flatMap((n) => [...n.ReservedPorts, ...n.DynamicPorts]))].map((port) => port.Label));
  group.Services.forEach((service, s) => problems.push(...serviceProblems(service, portLabels, [...at, "Services", s])));
  problems.push(...volumeProblems(job, group, at));

  group.Tasks.forEach((task, t) => {
    const path = [...at, "Tasks", t];
    task.Services.forEach((service, s) => problems.push(...serviceProblems(service, portLabels, [...path, "Services", s])));
    problems.push(...taskBlockProblems(task, group, path));
    const taskName = taskNameProblem(task.Name);
    if (taskName) problems.push({ path: [...path, "Name"], message: taskName });
    problems.push(...taskInputProblems(task, path), ...taskIdentityProblems(task, path));
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
    // Nomad (LogConfig.Validate) checks each task's logs against the whole disk on its own, not their sum.
    const logStorageMb = task.LogConfig.MaxFiles * task.LogConfig.MaxFileSizeMB;
    if (logStorageMb >= group.EphemeralDisk.SizeMB) {
      problems.push({
        path: [...path, "LogConfig"],
        message: `log storage (${logStorageMb} MB: max_files x max_file_size) must be less than the ephemeral disk (${group.EphemeralDisk.SizeMB} MB)`,
      });
    }
  });
  return problems;
}

/** Bounds and characters a task's values must keep to before anything is stored or run. */
function taskInputProblems(task: Task, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  const user = userProblem(task.User);
  if (user) problems.push({ path: [...path, "User"], message: user });
  for (const [name, value] of Object.entries(task.Env)) {
    const entry = envEntryProblem(name, value);
    if (entry) problems.push({ path: [...path, "Env", name], message: entry });
  }
  if (task.Resources.CPU > MAX_CPU_MHZ) problems.push({ path: [...path, "Resources", "CPU"], message: `must be at most ${MAX_CPU_MHZ} MHz (got ${task.Resources.CPU})` });
  // Nomad's Resources.Validate: MHz or whole cores, one of the two.
  if (task.Resources.Cores > 0 && task.Resources.CPU > 0) {
    problems.push({ path: [...path, "Resources", "Cores"], message: "a task asks for cpu or cores, not both" });
  } else if (task.Resources.Cores === 0 && task.Resources.CPU < 1) {
    problems.push({ path: [...path, "Resources", "CPU"], message: `must be at least 1 MHz unless cores are reserved (got ${task.Resources.CPU})` });
  }
  for (const key of ["MemoryMB", "MemoryMaxMB"] as const) {
    const value = task.Resources[key];
    if (value > MAX_MEMORY_MB) problems.push({ path: [...path, "Resources", key], message: `must be at most ${MAX_MEMORY_MB} MB (got ${value})` });
  }
  return problems;
}

/** The limits on how many allocs a job asks for (limits.ts), which a scale request must keep too. */
export function countProblems(job: Job): Problem[] {
  const problems: Problem[] = [];
  const total = job.TaskGroups.reduce((sum, group) => sum + group.Count, 0);
  if (total > MAX_JOB_COUNT) problems.push({ path: ["TaskGroups"], message: `a job may have at most ${MAX_JOB_COUNT} allocs in all (its groups ask for ${total})` });
  job.TaskGroups.forEach((group, g) => {
    if (group.Count > MAX_GROUP_COUNT) problems.push({ path: ["TaskGroups", g, "Count"], message: `must be at most ${MAX_GROUP_COUNT} (got ${group.Count})` });
  });
  return problems;
}

export function validateJob(job: Job): Problem[] {
  const problems: Problem[] = [];
  if (job.Datacenters.length === 0) problems.push({ path: ["Datacenters"], message: "name at least one datacenter" });
  job.Datacenters.forEach((dc, i) => {
    if (dc === "") problems.push({ path: ["Datacenters", i], message: "must not be empty" });
  });
  if (job.TaskGroups.length === 0) problems.push({ path: ["TaskGroups"], message: "a job needs at least one group" });
  const id = jobIdProblem(job.ID);
  if (id) problems.push({ path: ["ID"], message: id });
  const name = jobNameProblem(job.Name);
  if (name) problems.push({ path: ["Name"], message: name });
  problems.push(...countProblems(job));
  for (const name of duplicates(job.TaskGroups.map((group) => group.Name))) {
    problems.push({ path: ["TaskGroups"], message: `group "${name}" is defined more than once` });
  }
  job.TaskGroups.forEach((group, g) => problems.push(...groupProblems(job, group, ["TaskGroups", g])));
  problems.push(...placementProblems(job), ...schedulingProblems(job));
  return problems;
}
