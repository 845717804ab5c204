/**
 * Following a write through, as `nomad job run` does: the evaluation it
 * triggered (what was placed, what could not be and why), then the placed
 * allocations until each one runs or fails.
 *
 *   evaluation ──> allocations created ──> all placed? ──no──> placement failures, exit 2
 *                                              │ yes
 *                                              ▼ (unless -detach)
 *                    wait (blocking queries) until each alloc is running/complete (exit 0)
 *                                                          or failed/lost (exit 1)
 *                    printing each task's events (Driver Failure, Restarting, ...) as they come
 */
import type { AllocListStub, AllocMetric } from "../structs/alloc.ts";
import type { Evaluation } from "../structs/evaluation.ts";
import type { Io } from "./command.ts";
import { shortId } from "./format.ts";
import type { AgentClient } from "./http-client.ts";

/** Nomad's exit code when the job was registered but not everything could be placed. */
export const EXIT_PLACEMENT_FAILED = 2;

/** Nomad's formatAllocMetrics: one "* reason" line per cause. */
export function formatAllocMetric(metric: AllocMetric, indent: string): string[] {
  const lines: string[] = [];
  if (metric.NodesEvaluated === 0) lines.push("No nodes were eligible for evaluation");
  for (const [dc, available] of Object.entries(metric.NodesAvailable)) {
    if (available === 0) lines.push(`No nodes are available in datacenter "${dc}"`);
  }
  for (const [constraint, count] of Object.entries(metric.ConstraintFiltered ?? {})) {
    lines.push(`Constraint "${constraint}": ${count} nodes excluded by filter`);
  }
  if (metric.NodesExhausted > 0) lines.push(`Resources exhausted on ${metric.NodesExhausted} nodes`);
  for (const [dimension, count] of Object.entries(metric.DimensionExhausted ?? {})) {
    lines.push(`Dimension "${dimension}" exhausted on ${count} nodes`);
  }
  return lines.map((line) => `${indent}* ${line}`);
}

/** The "Task Group ... (failed to place N allocations)" block for each group of `failed`. */
export function formatPlacementFailures(failed: Readonly<Record<string, AllocMetric>>, indent = "    "): string[] {
  return Object.entries(failed).flatMap(([group, metric]) => {
    const count = 1 + metric.CoalescedFailures;
    return [`${indent}Task Group "${group}" (failed to place ${count} allocation${count === 1 ? "" : "s"}):`, ...formatAllocMetric(metric, `${indent}  `)];
  });
}

/** Prints what the evaluation did; true when everything was placed. */
export async function monitorEvaluation(client: AgentClient, io: Io, evalId: string, verbose: boolean): Promise<{ placed: boolean; allocs: AllocListStub[] }> {
  const id = (value: string) => shortId(value, verbose);
  const { body: evaluation } = await client.get<Evaluation>(`/v1/evaluation/${encodeURIComponent(evalId)}`);
  const { body: allocs } = await client.get<AllocListStub[]>(`/v1/evaluation/${encodeURIComponent(evalId)}/allocations`);
  io.print(`==> Monitoring evaluation "${id(evaluation.ID)}"`);
  io.print(`    Evaluation triggered by job "${evaluation.JobID}"`);
  if (evaluation.DeploymentID) io.print(`    Evaluation within deployment: "${id(evaluation.DeploymentID)}"`);
  for (const alloc of allocs) io.print(`    Allocation "${id(alloc.ID)}" created: node "${id(alloc.NodeID)}", group "${alloc.TaskGroup}"`);
  io.print(`    Evaluation status changed: "pending" -> "${evaluation.Status}"`);
  const failed = evaluation.FailedTGAllocs ?? {};
  if (Object.keys(failed).length === 0) {
    io.print(`==> Evaluation "${id(evaluation.ID)}" finished with status "${evaluation.Status}"`);
    return { placed: true, allocs };
  }
  io.print(`==> Evaluation "${id(evaluation.ID)}" finished with status "${evaluation.Status}" but failed to place all allocations:`);
  for (const line of formatPlacementFailures(failed)) io.print(line);
  if (evaluation.BlockedEval) io.print(`    Evaluation "${id(evaluation.BlockedEval)}" waiting for additional capacity to place remainder`);
  return { placed: false, allocs };
}

const SETTLED = new Set(["running", "complete", "failed", "lost"]);

/**
 * The task events of `alloc` not printed yet, one line each, in order.
 * `seen` keeps, per alloc and task, the time of the last event printed (a
 * task keeps only its last events, so a count would drift).
 */
function newTaskEvents(alloc: AllocListStub, seen: Map<string, number>, verbose: boolean): string[] {
  const lines: string[] = [];
  for (const [task, state] of Object.entries(alloc.TaskStates ?? {})) {
    const key = `${alloc.ID}/${task}`;
    const last = seen.get(key) ?? 0;
    for (const event of state.Events.filter((candidate) => candidate.Time > last)) {
      const message = event.DisplayMessage || event.Message;
      lines.push(`    Allocation "${shortId(alloc.ID, verbose)}" task "${task}": ${event.Type}${message ? `: ${message}` : ""}`);
    }
    const newest = state.Events.at(-1)?.Time;
    if (newest !== undefined && newest > last) seen.set(key, newest);
  }
  return lines;
}

/**
 * Waits until each of `allocIds` runs (or finished, or failed), printing each
 * task's events as they come; exit code 0 when none failed.
 */
export async function waitForAllocs(client: AgentClient, io: Io, jobId: string, allocIds: readonly string[], verbose: boolean): Promise<number> {
  if (allocIds.length === 0) return 0;
  io.print("==> Waiting for allocations to start");
  const pending = new Set(allocIds);
  const reported = new Map<string, string>();
  const seenEvents = new Map<string, number>();
  let failures = 0;
  let index = 0;
  while (pending.size > 0) {
    const { body, index: next } = await client.get<AllocListStub[]>(`/v1/job/${encodeURIComponent(jobId)}/allocations`, index ? { index } : {});
    index = next;
    for (const alloc of body) {
      if (!pending.has(alloc.ID)) continue;
      for (const line of newTaskEvents(alloc, seenEvents, verbose)) io.print(line);
      const status = alloc.DesiredStatus === "run" ? alloc.ClientStatus : `stopped (${alloc.DesiredDescription || alloc.DesiredStatus})`;
      if (reported.get(alloc.ID) !== status && (SETTLED.has(alloc.ClientStatus) || alloc.DesiredStatus !== "run")) {
        const description = alloc.ClientDescription ? `: ${alloc.ClientDescription}` : "";
        io.print(`    Allocation "${shortId(alloc.ID, verbose)}" (${alloc.Name.slice(alloc.JobID.length + 1)}) is ${status}${description}`);
        reported.set(alloc.ID, status);
      }
      if (alloc.ClientStatus === "failed" || alloc.ClientStatus === "lost") failures++;
      if (SETTLED.has(alloc.ClientStatus) || alloc.DesiredStatus !== "run") pending.delete(alloc.ID);
    }
    // An alloc no longer listed was collected: nothing left to wait for.
    for (const id of [...pending]) if (!body.some((alloc) => alloc.ID === id)) pending.delete(id);
  }
  return failures > 0 ? 1 : 0;
}
