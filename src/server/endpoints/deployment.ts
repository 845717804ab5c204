/**
 * Deployments (Nomad's Deployment endpoint): reads, and the operator's
 * actions, each one write that also evaluates the job so the deployment
 * moves at once (see deployments/actions.ts).
 *
 *   promote ──> canaries healthy? ──> Promoted; the rest of the group rolls
 *   fail ──> failed (auto_revert: the latest stable version registered again)
 *   pause / resume ──> no new placements while paused
 *   allocation-health ──> the operator marks allocs healthy or unhealthy (health_check = "manual")
 */
import type { AllocListStub } from "../../structs/alloc.ts";
import { isoOfNanos } from "../../structs/common.ts";
import { DEPLOYMENT_DESCRIPTION, isDeploymentActive, type Deployment, type DeploymentUpdateResponse } from "../../structs/deployment.ts";
import { countAllocHealth, failDeployment, pauseDeployment, promoteDeployment, type DeploymentOutcome } from "../deployments/actions.ts";
import { deploymentsOfJob, latestDeployment } from "../deployments/query.ts";
import { invalid, notFound, refused } from "../errors.ts";
import type { WriteTxn } from "../state/store.ts";
import { byPrefix, EVERY_NAMESPACE, type EndpointContext } from "./context.ts";
import { DEFAULT_NAMESPACE } from "../../structs/job.ts";

export class DeploymentEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  list(prefix?: string, inNamespace: (namespace: string) => boolean = EVERY_NAMESPACE): Deployment[] {
    return byPrefix(this.ctx.store.read.deployments.values(), prefix, inNamespace).sort((a, b) => b.CreateIndex - a.CreateIndex);
  }

  get(id: string): Deployment {
    const deployment = this.ctx.store.read.deployments.get(id);
    if (!deployment) throw notFound(`deployment "${id}"`);
    return deployment;
  }

  /** GET /v1/deployment/allocations/:id. */
  allocations(id: string): AllocListStub[] {
    // A deployment's allocs are its job's: only that group is read.
    const { JobID } = this.get(id);
    const out: AllocListStub[] = [];
    for (const alloc of this.ctx.store.read.allocs.ofGroup(JobID)) if (alloc.DeploymentID === id) out.push(this.ctx.store.stub(alloc));
    return out.sort((a, b) => b.CreateIndex - a.CreateIndex);
  }

  /** The job's deployments, newest first; `all` includes those of a purged job of the same ID. */
  ofJob(jobId: string, all: boolean, namespace: string = DEFAULT_NAMESPACE): Deployment[] {
    const { read } = this.ctx.store;
    const found = read.jobs.get(jobId);
    const job = found?.Namespace === namespace ? found : undefined;
    if (all || !job) return [...read.deployments.values()].filter((deployment) => deployment.JobID === jobId && deployment.Namespace === namespace).sort((a, b) => b.CreateIndex - a.CreateIndex);
    return deploymentsOfJob(read.deployments.values(), job);
  }

  /** The job's latest deployment, or null (Nomad's answer for a job that never had one, or no such job). */
  latestOfJob(jobId: string, namespace: string = DEFAULT_NAMESPACE): Deployment | null {
    const job = this.ctx.store.read.jobs.get(jobId);
    if (job?.Namespace !== namespace) return null;
    return latestDeployment(this.ctx.store.read.deployments.values(), job) ?? null;
  }

  promote(id: string, all: boolean, groups: readonly string[]): DeploymentUpdateResponse {
    return this.act(id, (txn, deployment) => promoteDeployment(txn, this.ctx.scheduler, deployment, all ? [] : groups));
  }

  fail(id: string): DeploymentUpdateResponse {
    return this.act(id, (txn, deployment) => {
      // Nomad's words and its 500 (nomad/deployment_endpoint.go).
      if (!isDeploymentActive(deployment)) throw refused("can't fail terminal deployment");
      return failDeployment(txn, this.ctx.scheduler, deployment, DEPLOYMENT_DESCRIPTION.failedByUser);
    });
  }

  pause(id: string, pause: boolean): DeploymentUpdateResponse {
    return this.act(id, (txn, deployment) => pauseDeployment(txn, this.ctx.scheduler, deployment, pause));
  }

  /** POST /v1/deployment/allocation-health/:id: the operator's verdict on allocs of the deployment. */
  allocationHealth(id: string, healthy: readonly string[], unhealthy: readonly string[]): DeploymentUpdateResponse {
    return this.act(id, (txn, deployment) => {
      if (!isDeploymentActive(deployment)) throw refused("can't set health of allocations for a terminal deployment");
      const changed = [...healthy.map((allocId) => [allocId, true] as const), ...unhealthy.map((allocId) => [allocId, false] as const)].map(([allocId, verdict]) => {
        const alloc = txn.allocs.get(allocId);
        if (!alloc || alloc.DeploymentID !== id) throw invalid(`allocation "${allocId}" is not part of deployment "${id}"`);
        const after = {
          ...alloc,
          DeploymentStatus: { Healthy: verdict, Timestamp: isoOfNanos(txn.now), Canary: alloc.DeploymentStatus?.Canary ?? false, ModifyIndex: txn.index },
          ModifyIndex: txn.index,
          ModifyTime: txn.now,
        };
        txn.allocs.put(allocId, after);
        return { before: alloc, after };
      });
      countAllocHealth(txn, this.ctx.scheduler, changed);
      return { evaluation: undefined, revertedVersion: null };
    });
  }

  private act(id: string, fn: (txn: WriteTxn, deployment: Deployment) => DeploymentOutcome): DeploymentUpdateResponse {
    return this.ctx.store.write((txn) => {
      const deployment = txn.deployments.get(id);
      if (!deployment) throw notFound(`deployment "${id}"`);
      const outcome = fn(txn, deployment);
      return {
        EvalID: outcome.evaluation?.ID ?? "",
        EvalCreateIndex: outcome.evaluation ? txn.index : 0,
        DeploymentModifyIndex: txn.index,
        RevertedJobVersion: outcome.revertedVersion,
        Index: txn.index,
      };
    });
  }
}
