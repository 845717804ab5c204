/**
 * What happens to a deployment (Nomad's deploymentwatcher), each inside the
 * write that causes it: an alloc's health counted, the deployment failed
 * (with auto_revert to the latest stable version), canaries promoted,
 * paused or resumed, the progress deadline checked. Each ends by
 * evaluating the job, so the next batch is placed at once.
 *
 *   alloc healthy ──> HealthyAllocs++, progress deadline pushed out ──> auto_promote? ──> evaluate
 *   alloc unhealthy ──> UnhealthyAllocs++ ──> fail ("Failed due to unhealthy allocations")
 *   progress deadline passed, group not done ──> fail ("Failed due to progress deadline")
 *   fail ──> auto_revert in any group? ──> latest stable version, if its spec differs,
 *            registered again as a new version (" - rolling back to job version N")
 */
import type { Allocation } from "../../structs/alloc.ts";
import { isoOfNanos } from "../../structs/common.ts";
import {
  DEPLOYMENT_DESCRIPTION,
  isDeploymentActive,
  runningDescription,
  type Deployment,
  type DeploymentState,
} from "../../structs/deployment.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import { GO_ZERO_TIME } from "../../structs/node.ts";
import { invalid, refused } from "../errors.ts";
import { specOf, storeVersion, versionsOf } from "../job-versions.ts";
import { evaluate, type SchedulerDeps } from "../scheduler/evaluate.ts";
import type { WriteTxn } from "../state/store.ts";

const nanosOfIso = (iso: string) => (iso === GO_ZERO_TIME ? 0 : Date.parse(iso) * 1e6);

export interface DeploymentOutcome {
  evaluation: Evaluation | undefined;
  revertedVersion: number | null;
}

function put(txn: WriteTxn, deployment: Deployment): Deployment {
  const stamped = { ...deployment, ModifyIndex: txn.index };
  txn.deployments.put(deployment.ID, stamped);
  return stamped;
}

/** Evaluates the deployment's job, if it still exists. */
function evaluateJob(txn: WriteTxn, deps: SchedulerDeps, deployment: Deployment): Evaluation | undefined {
  const job = txn.jobs.get(deployment.JobID);
  if (!job || job.CreateIndex !== deployment.JobCreateIndex) return undefined;
  return evaluate(txn, deps, deployment.JobID, "deployment-watcher");
}

/**
 * Fails the deployment; with auto_revert, registers the latest stable
 * version again. Then evaluates the job.
 */
export function failDeployment(txn: WriteTxn, deps: SchedulerDeps, deployment: Deployment, description: string): DeploymentOutcome {
  let text = description;
  let revertedVersion: number | null = null;
  const job = txn.jobs.get(deployment.JobID);
  const autoRevert = Object.values(deployment.TaskGroups).some((state) => state.AutoRevert);
  let revertTo;
  if (autoRevert && job && job.CreateIndex === deployment.JobCreateIndex) {
    const stable = versionsOf(txn.versions.values(), job).find((version) => version.Stable && version.Version !== deployment.JobVersion);
    if (!stable) text = `${description} - no stable job version to auto revert to`;
    else if (specOf(stable) === specOf(job)) text = `${description} - not rolling back to stable job version ${stable.Version} as current job has same specification`;
    else {
      text = `${description} - rolling back to job version ${stable.Version}`;
      revertTo = stable;
      revertedVersion = stable.Version;
    }
  }
  put(txn, { ...deployment, Status: "failed", StatusDescription: text });
  if (revertTo && job) storeVersion(txn, revertTo, job);
  return { evaluation: evaluateJob(txn, deps, deployment), revertedVersion };
}

/** Where the deadline checks look allocs up: a write, or the committed tables when the server opens. */
type AllocLookup = { allocs: Pick<ReadonlyMap<string, Allocation>, "get"> };

/** Whether every canary of the group is placed and healthy. */
function canariesHealthy(txn: AllocLookup, state: DeploymentState): boolean {
  if (state.PlacedCanaries.length < state.DesiredCanaries) return false;
  return state.PlacedCanaries.every((id) => txn.allocs.get(id)?.DeploymentStatus?.Healthy === true);
}

/**
 * Promotes the canaries of `groups` (all when empty): the rolling update of
 * the rest proceeds. Refused, as Nomad refuses, when the deployment is not
 * running or a group's canaries are not all healthy.
 */
export function promoteDeployment(txn: WriteTxn, deps: SchedulerDeps, deployment: Deployment, groups: readonly string[]): DeploymentOutcome {
  if (!isDeploymentActive(deployment)) throw refused("can't promote terminal deployment");
  if (deployment.Status === "paused") throw invalid("can't promote a paused deployment; resume it first");
  const chosen = Object.entries(deployment.TaskGroups).filter(([name, state]) => state.DesiredCanaries > 0 && !state.Promoted && (groups.length === 0 || groups.includes(name)));
  for (const name of groups) if (!deployment.TaskGroups[name]) throw invalid(`deployment has no task group "${name}"`);
  if (chosen.length === 0) throw invalid("no canaries to promote");
  for (const [name, state] of chosen) {
    if (!canariesHealthy(txn, state)) {
      const healthy = state.PlacedCanaries.filter((id) => txn.allocs.get(id)?.DeploymentStatus?.Healthy === true).length;
      throw invalid(`Task group "${name}" has ${healthy}/${state.DesiredCanaries} healthy allocations`);
    }
  }
  const taskGroups = { ...deployment.TaskGroups };
  for (const [name, state] of chosen) {
    taskGroups[name] = {
      ...state,
      Promoted: true,
      RequireProgressBy: state.ProgressDeadline > 0 ? isoOfNanos(txn.now + state.ProgressDeadline) : state.RequireProgressBy,
    };
  }
  const promoted = { ...deployment, TaskGroups: taskGroups };
  put(txn, { ...promoted, StatusDescription: runningDescription(promoted) });
  return { evaluation: evaluateJob(txn, deps, deployment), revertedVersion: null };
}

/** Pauses (no new placements or replacements) or resumes the deployment. */
export function pauseDeployment(txn: WriteTxn, deps: SchedulerDeps, deployment: Deployment, pause: boolean): DeploymentOutcome {
  if (!isDeploymentActive(deployment)) throw refused(`can't ${pause ? "pause" : "resume"} terminal deployment`);
  if (pause) put(txn, { ...deployment, Status: "paused", StatusDescription: DEPLOYMENT_DESCRIPTION.paused });
  else {
    const running: Deployment = { ...deployment, Status: "running" };
    put(txn, { ...running, StatusDescription: runningDescription(running) });
  }
  return { evaluation: evaluateJob(txn, deps, deployment), revertedVersion: null };
}

/**
 * Counts the allocs whose health was just decided (`changed`: before and
 * after) into their deployments, then acts on each deployment touched: an
 * unhealthy alloc fails it; healthy canaries of an auto_promote deployment
 * promote it; otherwise the job is evaluated to place the next batch.
 */
export function countAllocHealth(txn: WriteTxn, deps: SchedulerDeps, changed: readonly { before: Allocation; after: Allocation }[]): void {
  const touched = new Map<string, { deployment: Deployment; unhealthy: boolean }>();
  for (const { before, after } of changed) {
    const healthy = after.DeploymentStatus?.Healthy;
    if (healthy === null || healthy === undefined || before.DeploymentStatus?.Healthy === healthy || after.DeploymentID === "") continue;
    const entry = touched.get(after.DeploymentID);
    const deployment = entry?.deployment ?? txn.deployments.get(after.DeploymentID);
    const state = deployment?.TaskGroups[after.TaskGroup];
    if (!deployment || !state || !isDeploymentActive(deployment)) continue;
    const counted: DeploymentState = healthy
      ? { ...state, HealthyAllocs: state.HealthyAllocs + 1, RequireProgressBy: laterProgressBy(state, after) }
      : { ...state, UnhealthyAllocs: state.UnhealthyAllocs + 1 };
    touched.set(deployment.ID, { deployment: { ...deployment, TaskGroups: { ...deployment.TaskGroups, [after.TaskGroup]: counted } }, unhealthy: (entry?.unhealthy ?? false) || !healthy });
  }
  for (const { deployment, unhealthy } of touched.values()) {
    const stored = put(txn, deployment);
    if (unhealthy && stored.Status === "running") failDeployment(txn, deps, stored, DEPLOYMENT_DESCRIPTION.failedAllocations);
    else if (stored.Status === "running" && autoPromotable(txn, stored)) promoteDeployment(txn, deps, stored, []);
    else if (mayProgress(stored)) evaluateJob(txn, deps, stored);
  }
}

/**
 * Whether evaluating the job can change anything once healthy allocs are
 * counted: a group still has allocs to place (the next batch of a rolling
 * update, canaries' group), or every group is healthy (the deployment
 * completes). While all are placed and some are not healthy yet, an
 * evaluation finds nothing to do: skipping it keeps a deployment of N
 * allocs from evaluating the job (every one of its allocs) N times.
 */
function mayProgress(deployment: Deployment): boolean {
  const groups = Object.values(deployment.TaskGroups);
  return groups.some((state) => state.PlacedAllocs < state.DesiredTotal) || groups.every((state) => state.HealthyAllocs >= state.DesiredTotal);
}

/** A healthy alloc gives the group a fresh progress deadline from its health time. */
function laterProgressBy(state: DeploymentState, alloc: Allocation): string {
  if (state.ProgressDeadline === 0) return state.RequireProgressBy;
  const at = alloc.DeploymentStatus?.Timestamp ? nanosOfIso(alloc.DeploymentStatus.Timestamp) : 0;
  const candidate = at + state.ProgressDeadline;
  return candidate > nanosOfIso(state.RequireProgressBy) ? isoOfNanos(candidate) : state.RequireProgressBy;
}

function autoPromotable(txn: WriteTxn, deployment: Deployment): boolean {
  const waiting = Object.values(deployment.TaskGroups).filter((state) => state.DesiredCanaries > 0 && !state.Promoted);
  return waiting.length > 0 && Object.values(deployment.TaskGroups).every((state) => state.AutoPromote) && waiting.every((state) => canariesHealthy(txn, state));
}

/** A group still owes progress: not all healthy, or canaries not promoted (unless they all wait, healthy, for the operator). */
function owesProgress(txn: AllocLookup, state: DeploymentState): boolean {
  if (state.DesiredCanaries > 0 && !state.Promoted) return !canariesHealthy(txn, state);
  return state.HealthyAllocs < state.DesiredTotal;
}

/** When the running deployment fails for lack of progress (ns), or undefined. */
export function progressDeadline(txn: AllocLookup, deployment: Deployment): number | undefined {
  if (deployment.Status !== "running") return undefined;
  let earliest: number | undefined;
  for (const state of Object.values(deployment.TaskGroups)) {
    const due = nanosOfIso(state.RequireProgressBy);
    if (due === 0 || !owesProgress(txn, state)) continue;
    if (earliest === undefined || due < earliest) earliest = due;
  }
  return earliest;
}

/** Fails the deployment if its progress deadline has passed. */
export function checkProgress(txn: WriteTxn, deps: SchedulerDeps, deploymentId: string): void {
  const deployment = txn.deployments.get(deploymentId);
  if (!deployment) return;
  const due = progressDeadline(txn, deployment);
  if (due !== undefined && due <= txn.now) failDeployment(txn, deps, deployment, DEPLOYMENT_DESCRIPTION.progressDeadline);
}
