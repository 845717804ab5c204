/**
 * Allocations (Nomad's Alloc endpoint and the client's Node.UpdateAlloc):
 * reads, a stop that places a replacement, and the client's reports.
 */
import { parseOrThrow } from "../../lib/validation.ts";
import { AllocClientUpdateSchema, type AllocClientUpdate, type AllocStopResponse } from "../../structs/api.ts";
import { allocListStub, isClientTerminal, type Allocation, type AllocListStub } from "../../structs/alloc.ts";
import { isFinishedOrphan } from "../gc.ts";
import { notFound } from "../errors.ts";
import { advanceDrains } from "../drain/drainer.ts";
import { evaluate, refreshJobStatus, retryBlocked } from "../scheduler/evaluate.ts";
import { DESIRED } from "../scheduler/reconcile.ts";
import { byPrefix, type EndpointContext } from "./context.ts";

export class AllocEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  list(prefix?: string): AllocListStub[] {
    return byPrefix(this.ctx.store.read.allocs.values(), prefix).map(allocListStub);
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
   * for the allocations waiting for it.
   */
  updateFromClient(updates: readonly AllocClientUpdate[]): { Index: number } {
    const parsed = updates.map((update, i) => parseOrThrow(AllocClientUpdateSchema, update, `allocation update ${i}`));
    return this.ctx.store.write((txn) => {
      let freed = false;
      const jobs = new Set<string>();
      for (const update of parsed) {
        const alloc = txn.allocs.get(update.ID);
        if (!alloc) continue;
        freed ||= !isClientTerminal(alloc.ClientStatus) && isClientTerminal(update.ClientStatus);
        const updated: Allocation = {
          ...alloc,
          ClientStatus: update.ClientStatus,
          ClientDescription: update.ClientDescription,
          TaskStates: update.TaskStates,
          DeploymentStatus: update.DeploymentStatus,
          ModifyIndex: txn.index,
          ModifyTime: txn.now,
        };
        if (isFinishedOrphan(txn, updated)) txn.allocs.delete(alloc.ID);
        else txn.allocs.put(alloc.ID, updated);
        jobs.add(alloc.JobID);
      }
      for (const jobId of jobs) refreshJobStatus(txn, jobId);
      if (freed) retryBlocked(txn, this.ctx.scheduler);
      if (freed) advanceDrains(txn, this.ctx.scheduler);
      return { Index: txn.index };
    });
  }
}
