/**
 * Which jobs are finished, so their groups can leave memory (tiered.ts): a
 * job that is dead, with every alloc finished on its client, no evaluation
 * still waiting and no deployment still running. Nothing in such a group
 * holds resources or wants scheduling; until the GC removes it, only the
 * API asks for it, and SQLite answers.
 *
 * What the GC needs to know of a cold group stays in memory (ColdGroup, kept
 * in columns by cold-groups.ts), so a pass looks only at the groups old
 * enough to lose something.
 */
import { isClientTerminal, isAllocTerminal, type Allocation } from "../../structs/alloc.ts";
import { isDeploymentActive, type Deployment } from "../../structs/deployment.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import type { Job } from "../../structs/job.ts";

/** A cold group, as the GC sees it (nanoseconds since the epoch). */
export interface ColdGroup {
  /** The group's last change: the job's submit time or an alloc's or evaluation's last update. */
  last: number;
  /** The oldest evaluation or stopped alloc a pass could remove before the job itself, if any. */
  oldestRemovable: number | undefined;
  /** A batch job's group: batch_eval_gc_threshold applies. */
  batch: boolean;
  /** What lists and searches need of the job without reading it: it is dead while cold. */
  namespace: string;
  parentId: string;
  /** Whether a task group has a scaling block: the job's scaling policies outlive its allocs. */
  scaled: boolean;
  /** The job's list stub as JSON text, kept once a list made it (the group cannot change while cold). */
  listStub?: string;
}

const TERMINAL_EVAL = new Set(["complete", "failed", "canceled"]);

/** What tells whether a job's group is finished (read from objects in memory, or from rows as the server opens). */
export interface GroupFacts {
  job: Pick<Job, "Status" | "SubmitTime" | "Type" | "Stop" | "Namespace" | "ParentID" | "TaskGroups"> | undefined;
  allocs: Pick<Allocation, "ClientStatus" | "DesiredStatus" | "ModifyTime">[];
  evals: Pick<Evaluation, "Status" | "ModifyTime" | "CreateIndex">[];
  deployments: Pick<Deployment, "Status">[];
}

/** One job's objects in memory. */
export interface GroupInMemory extends GroupFacts {
  job: Job | undefined;
  versions: Job[];
  allocs: Allocation[];
  evals: Evaluation[];
  deployments: Deployment[];
}

/** The group's GC facts when it is finished, else undefined (it stays in memory). */
export function finishedGroup(group: GroupFacts): ColdGroup | undefined {
  const { job, allocs, evals, deployments } = group;
  if (!job || job.Status !== "dead") return undefined;
  if (!allocs.every((alloc) => isClientTerminal(alloc.ClientStatus))) return undefined;
  if (!evals.every((evaluation) => TERMINAL_EVAL.has(evaluation.Status))) return undefined;
  if (deployments.some(isDeploymentActive)) return undefined;
  const last = Math.max(job.SubmitTime, ...allocs.map((alloc) => alloc.ModifyTime), ...evals.map((evaluation) => evaluation.ModifyTime));
  const batch = job.Type === "batch";
  // A live batch job keeps its evaluations and allocs (gc.ts); a stopped one, or another type, loses the superseded ones first.
  let oldestRemovable: number | undefined;
  if (!batch || job.Stop) {
    const lastEval = Math.max(0, ...evals.map((evaluation) => evaluation.CreateIndex));
    const times = [
      ...evals.filter((evaluation) => evaluation.CreateIndex !== lastEval).map((evaluation) => evaluation.ModifyTime),
      ...allocs.filter((alloc) => isAllocTerminal(alloc) && alloc.DesiredStatus !== "run").map((alloc) => alloc.ModifyTime),
    ];
    if (times.length > 0) oldestRemovable = Math.min(...times);
  }
  return { last, oldestRemovable, batch, namespace: job.Namespace, parentId: job.ParentID, scaled: job.TaskGroups.some((group) => group.Scaling) };
}
