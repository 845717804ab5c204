/**
 * The rules of the blocks the server schedules by (Nomad's
 * UpdateStrategy, ReschedulePolicy, PeriodicConfig, ParameterizedJobConfig
 * and ScalingPolicy Validate), checked on register so a block the server
 * cannot act on is a 400 naming the field.
 */
import { parseCron } from "../lib/cron.ts";
import { formatDuration } from "../lib/duration.ts";
import { NS_PER_MS } from "../lib/units.ts";
import type { Job, TaskGroup, UpdateStrategy } from "../structs/job.ts";
import type { PathSegment } from "./paths.ts";
import type { Problem } from "./validate.ts";

/** Nomad's ReschedulePolicyMinDelay: a shorter delay would reschedule a crashing alloc in a tight loop. */
const RESCHEDULE_MIN_DELAY_NS = 5_000 * NS_PER_MS;
/** Nomad's ReschedulePolicyMinInterval. */
const RESCHEDULE_MIN_INTERVAL_NS = 15_000 * NS_PER_MS;
const HEALTH_CHECKS = ["checks", "task_states", "manual"];
const DELAY_FUNCTIONS = ["constant", "exponential", "fibonacci"];
const PAYLOAD_MODES = ["optional", "required", "forbidden"];

const ns = (value: number) => formatDuration(value / NS_PER_MS);

function updateProblems(update: UpdateStrategy, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  const at = (field: string, message: string) => problems.push({ path: [...path, field], message });
  if (!HEALTH_CHECKS.includes(update.HealthCheck)) at("HealthCheck", `invalid health check "${update.HealthCheck}" (use ${HEALTH_CHECKS.join(", ")})`);
  if (update.Canary === 0 && update.AutoPromote) at("AutoPromote", "auto_promote requires a canary count greater than zero");
  if (update.HealthyDeadline <= 0) at("HealthyDeadline", "must be greater than zero");
  if (update.MinHealthyTime >= update.HealthyDeadline) {
    at("MinHealthyTime", `must be less than healthy_deadline (${ns(update.MinHealthyTime)} >= ${ns(update.HealthyDeadline)})`);
  }
  if (update.ProgressDeadline !== 0 && update.HealthyDeadline >= update.ProgressDeadline) {
    at("HealthyDeadline", `must be less than progress_deadline (${ns(update.HealthyDeadline)} >= ${ns(update.ProgressDeadline)})`);
  }
  if (update.Stagger <= 0) at("Stagger", "must be greater than zero");
  return problems;
}

function rescheduleProblems(group: TaskGroup, path: PathSegment[]): Problem[] {
  const policy = group.ReschedulePolicy;
  if (!policy || (policy.Attempts === 0 && !policy.Unlimited)) return [];
  const problems: Problem[] = [];
  const at = (field: string, message: string) => problems.push({ path: [...path, field], message });
  if (policy.Attempts > 0 && policy.Unlimited) at("Unlimited", "with attempts > 0, unlimited cannot also be true");
  if (policy.Attempts > 0 && policy.Interval <= 0) at("Interval", "must be more than zero when attempts > 0");
  if (policy.Delay < RESCHEDULE_MIN_DELAY_NS) at("Delay", `cannot be less than ${ns(RESCHEDULE_MIN_DELAY_NS)} (got ${ns(policy.Delay)})`);
  if (!DELAY_FUNCTIONS.includes(policy.DelayFunction)) at("DelayFunction", `invalid delay function "${policy.DelayFunction}" (use ${DELAY_FUNCTIONS.join(", ")})`);
  else if (policy.DelayFunction !== "constant" && policy.MaxDelay < policy.Delay) at("MaxDelay", `cannot be less than delay (${ns(policy.MaxDelay)} < ${ns(policy.Delay)})`);
  if (!policy.Unlimited && policy.Interval < RESCHEDULE_MIN_INTERVAL_NS) at("Interval", `cannot be less than ${ns(RESCHEDULE_MIN_INTERVAL_NS)} (got ${ns(policy.Interval)})`);
  return problems;
}

function scalingProblems(group: TaskGroup, path: PathSegment[]): Problem[] {
  const policy = group.Scaling;
  if (!policy) return [];
  const problems: Problem[] = [];
  if (policy.Max < policy.Min) problems.push({ path: [...path, "Scaling", "Max"], message: `maximum count must not be less than minimum count (${policy.Max} < ${policy.Min})` });
  if (group.Count < policy.Min) problems.push({ path: [...path, "Count"], message: `must not be less than the scaling minimum (${group.Count} < ${policy.Min})` });
  if (group.Count > policy.Max) problems.push({ path: [...path, "Count"], message: `must not be greater than the scaling maximum (${group.Count} > ${policy.Max})` });
  return problems;
}

/** What a disconnected node's allocations do once it comes back (Nomad 1.8+). */
const RECONCILE_OPTIONS = ["best_score", "longest_running", "keep_original", "keep_replacement"];

/** Nomad's DisconnectStrategy.Validate. */
function disconnectProblems(job: Job, group: TaskGroup, path: PathSegment[]): Problem[] {
  const disconnect = group.Disconnect;
  if (!disconnect) return [];
  const problems: Problem[] = [];
  const at = (field: string, message: string) => problems.push({ path: [...path, "Disconnect", field], message });
  if (disconnect.StopOnClientAfter !== null) {
    if (job.Type !== "service" && job.Type !== "batch") at("StopOnClientAfter", "stop_on_client_after can only be used with service or batch job types");
    if (disconnect.LostAfter !== 0) at("StopOnClientAfter", "stop_on_client_after and lost_after cannot both be set");
  }
  if (disconnect.Reconcile !== null && disconnect.Reconcile !== "" && !RECONCILE_OPTIONS.includes(disconnect.Reconcile)) {
    at("Reconcile", `invalid reconcile option "${disconnect.Reconcile}" (use ${RECONCILE_OPTIONS.join(", ")})`);
  }
  return problems;
}

export function schedulingProblems(job: Job): Problem[] {
  const problems: Problem[] = [];
  const periodic = job.Periodic;
  if (periodic?.Enabled) {
    if (job.Type !== "batch" && job.Type !== "sysbatch") problems.push({ path: ["Periodic"], message: 'periodic can only be used with the "batch" or "sysbatch" scheduler' });
    const specs = [
      ...(periodic.Spec === "" ? [] : [{ spec: periodic.Spec, path: ["Spec"] as PathSegment[] }]),
      ...(periodic.Specs ?? []).map((spec, i) => ({ spec, path: ["Specs", i] as PathSegment[] })),
    ];
    if (specs.length === 0) problems.push({ path: ["Periodic", "Spec"], message: "must specify a spec" });
    else if (periodic.SpecType !== "cron") problems.push({ path: ["Periodic", "SpecType"], message: `unknown periodic specification type "${periodic.SpecType}"` });
    else {
      for (const { spec, path } of specs) {
        const parsed = parseCron(spec, periodic.TimeZone || "UTC");
        if (typeof parsed === "string") problems.push({ path: ["Periodic", ...(parsed.startsWith("invalid time zone") ? ["TimeZone"] : path)], message: parsed });
      }
    }
  }
  const parameterized = job.ParameterizedJob;
  if (parameterized) {
    if (job.Type !== "batch" && job.Type !== "sysbatch") problems.push({ path: ["ParameterizedJob"], message: 'parameterized can only be used with the "batch" or "sysbatch" scheduler' });
    if (!PAYLOAD_MODES.includes(parameterized.Payload)) problems.push({ path: ["ParameterizedJob", "Payload"], message: `unknown payload requirement "${parameterized.Payload}" (use ${PAYLOAD_MODES.join(", ")})` });
    const both = parameterized.MetaRequired.filter((key) => parameterized.MetaOptional.includes(key));
    if (both.length > 0) problems.push({ path: ["ParameterizedJob"], message: `required and optional meta keys must be disjoint; in both: ${both.join(", ")}` });
  }
  // Nomad's Job.Validate: a system job runs on every node it may, so there is nothing to prefer or spread.
  if (job.Type === "system") {
    if (job.Affinities.length > 0) problems.push({ path: ["Affinities"], message: "system jobs may not have an affinity block" });
    if (job.Spreads.length > 0) problems.push({ path: ["Spreads"], message: "system jobs may not have a spread block" });
    job.TaskGroups.forEach((group, g) => {
      if (group.Affinities.length > 0) problems.push({ path: ["TaskGroups", g, "Affinities"], message: "system jobs may not have an affinity block" });
      if (group.Spreads.length > 0) problems.push({ path: ["TaskGroups", g, "Spreads"], message: "system jobs may not have a spread block" });
      group.Tasks.forEach((task, t) => {
        if (task.Affinities.length > 0) problems.push({ path: ["TaskGroups", g, "Tasks", t, "Affinities"], message: "system jobs may not have an affinity block" });
      });
    });
  }
  job.TaskGroups.forEach((group, g) => {
    const path = ["TaskGroups", g];
    if (group.Update) problems.push(...updateProblems(group.Update, [...path, "Update"]));
    problems.push(...rescheduleProblems(group, [...path, "ReschedulePolicy"]), ...scalingProblems(group, path), ...disconnectProblems(job, group, path));
  });
  return problems;
}
