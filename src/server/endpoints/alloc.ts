/**
 * Allocations (Nomad's Alloc endpoint and the client's Node.UpdateAlloc):
 * reads, a stop that places a replacement, and the client's reports.
 */
import { parseOrThrow } from "../../lib/validation.ts";
import { AllocClientUpdateSchema, type AllocClientUpdate, type AllocStopResponse } from "../../structs/api.ts";
import { isAllocTerminal, isClientTerminal, type AllocDeploymentStatus, type Allocation, type AllocListStub } from "../../structs/alloc.ts";
import { isoOfNanos } from "../../structs/common.ts";
import { countAllocHealth } from "../deployments/actions.ts";
import type { WriteTxn } from "../state/store.ts";
import { shareTaskStates } from "../state/task-state-sharing.ts";
import { isFinishedOrphan } from "../gc.ts";
import { notFound } from "../errors.ts";
import { advanceDrains } from "../drain/drainer.ts";
import { evaluate, refreshJobStatus, retryBlocked } from "../scheduler/evaluate.ts";
import { isSystemType } from "../scheduler/reconcile-system.ts";
import { DESIRED } from "../scheduler/reconcile.ts";
import { byPrefix, EVERY_NAMESPACE, type EndpointContext } from "./context.ts";

/**
 * The alloc's DeploymentStatus after a client report: the health the client
 * decided, the first time it decides it for the alloc's current deployment
 * (a late report about an earlier deployment is ignored); the server's
 * Canary flag is kept.
 */
function reportedHealth(txn: WriteTxn, alloc: Allocation, update: ReturnType<typeof parseUpdate>): AllocDeploymentStatus | null {
  const reported = update.DeploymentStatus;
  const current = alloc.DeploymentStatus;
  if (!reported || reported.Healthy === null || (current?.Healthy ?? null) !== null) return current;
  if (update.DeploymentID !== undefined && update.DeploymentID !== alloc.DeploymentID) return current;
  return {
    Healthy: reported.Healthy,
    Timestamp: reported.Timestamp ?? isoOfNanos(txn.now),
    Canary: current?.Canary ?? false,
    ModifyIndex: txn.index,
  };
}

const parseUpdate = (update: AllocClientUpdate, i: number) => parseOrThrow(AllocClientUpdateSchema, update, `allocation update ${i}`);

export class AllocEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  list(prefix?: string, inNamespace: (namespace: string) => boolean = EVERY_NAMESPACE): AllocListStub[] {
    const { store } = this.ctx;
    return byPrefix(store.read.allocs.listed((alloc) => store.stub(alloc), store.coldLists.allocStubs), prefix, inNamespace);
  }

  /** Whether the server still has the alloc (in memory or only stored), without reading it. */
  exists(id: string): boolean {
    return this.ctx.store.read.allocs.has(id);
  }

  get(id: string): Allocation {
    const alloc = this.ctx.store.read.allocs.get(id);
    if (!alloc) throw notFound(`allocation "${id}"`);
    return alloc;
  }

  /** POST /v1/allocation/:id/stop: the alloc stops and (unless its job is stopped) a replacement is placed. */
  stop(id: string): AllocStopResponse {
    return this.ctx.store.write((txn) => {
      const alloc = txn.allocs.get(id);
      if (!alloc) throw notFound(`allocation "${id}"`);
      if (alloc.DesiredStatus === "run") {
        txn.allocs.put(id, {
          ...alloc,
          DesiredStatus: "stop",
          DesiredDescription: DESIRED.stopped,
          ModifyIndex: txn.index,
          AllocModifyIndex: txn.index,
          ModifyTime: txn.now,
        });
      }
      const evaluation = evaluate(txn, this.ctx.scheduler, alloc.JobID, "alloc-stop");
      return { EvalID: evaluation.ID, Index: txn.index };
    });
  }

  /**
   * The client's reports on its allocs, in one transaction; unknown allocs
   * (already collected) are skipped. An alloc that finished frees its room
   * for the allocations waiting for it; one whose health was decided moves
   * its deployment along; one that failed may be rescheduled.
   */
  updateFromClient(updates: readonly AllocClientUpdate[]): { Index: number } {
    const parsed = updates.map(parseUpdate);
    return this.ctx.store.write((txn) => {
      let freed = false;
      // A job's status follows only whether its allocs are terminal: most reports (a task
      // started, an event) change none, and the job is not looked at again for them.
      const jobs = new Set<string>();
      const failed = new Set<string>();
      const health: { before: Allocation; after: Allocation }[] = [];
      for (const update of parsed) {
        const alloc = txn.allocs.get(update.ID);
        if (!alloc) continue;
        if (alloc.ClientStatus !== "failed" && update.ClientStatus === "failed" && alloc.DesiredStatus === "run") failed.add(alloc.JobID);
        const updated: Allocation = {
          ...alloc,
          ClientStatus: update.ClientStatus,
          ClientDescription: update.ClientDescription,
          TaskStates: shareTaskStates(alloc.TaskStates, update.TaskStates),
          DeploymentStatus: reportedHealth(txn, alloc, update),
          ModifyIndex: txn.index,
          ModifyTime: txn.now,
        };
        freed ||= !isClientTerminal(alloc.ClientStatus) && isClientTerminal(update.ClientStatus);
        const orphan = isFinishedOrphan(txn, updated);
        if (orphan) txn.allocs.delete(alloc.ID);
        else txn.allocs.put(alloc.ID, updated);
        if (updated.DeploymentStatus !== alloc.DeploymentStatus) health.push({ before: alloc, after: updated });
        if (orphan || isAllocTerminal(alloc) !== isAllocTerminal(updated)) jobs.add(alloc.JobID);
      }
      for (const jobId of jobs) refreshJobStatus(txn, jobId);
      countAllocHealth(txn, this.ctx.scheduler, health);
      // A failed alloc is rescheduled by its policy (now, or through a follow-up evaluation); system jobs have none (Nomad's UpdateAlloc).
      for (const jobId of failed) {
        const job = txn.jobs.get(jobId);
        if (job && !isSystemType(job)) evaluate(txn, this.ctx.scheduler, jobId, "alloc-failure");
      }
      if (freed) retryBlocked(txn, this.ctx.scheduler);
      if (freed || health.length > 0) advanceDrains(txn, this.ctx.scheduler);
      return { Index: txn.index };
    });
  }
}
