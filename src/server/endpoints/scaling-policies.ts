/**
 * Nomad 1.x's scaling policies (nomad/scaling_endpoint.go), read from the
 * jobs: each group with a `scaling` block is one horizontal policy whose
 * target is its namespace, job and group.
 *
 * Nomad gives a policy a random ID when its job is registered; drover
 * derives it from the target (a UUID-shaped SHA-256 of namespace, job and
 * group), so it is the same on every read, across restarts, and for every
 * version of the job, without a table of its own. Its indexes are the job's.
 */
import { createHash } from "node:crypto";
import type { Job } from "../../structs/job.ts";
import { notFound } from "../errors.ts";
import type { EndpointContext } from "./context.ts";

/** The only kind of policy a job's group scaling block makes (Nomad's ScalingPolicyTypeHorizontal). */
export const HORIZONTAL = "horizontal";

export interface ScalingPolicy {
  ID: string;
  Type: string;
  Target: { Namespace: string; Job: string; Group: string };
  Policy: Record<string, unknown> | null;
  Min: number;
  Max: number;
  Enabled: boolean;
  CreateIndex: number;
  ModifyIndex: number;
}

export type ScalingPolicyListStub = Pick<ScalingPolicy, "ID" | "Enabled" | "Type" | "Target" | "CreateIndex" | "ModifyIndex">;

export interface ScalingPolicyQuery {
  /** Only this job's policies (its type must then match exactly). */
  job: string;
  /** Only policies of this type (a prefix, without `job`). */
  type: string;
  /** Only policies whose target is in a namespace this accepts (the request's, or with `*` those the caller may read). */
  inNamespace: (namespace: string) => boolean;
}

function policyId(namespace: string, job: string, group: string): string {
  const hex = createHash("sha256").update(`${namespace}\0${job}\0${group}`).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

function policiesOf(job: Job): ScalingPolicy[] {
  const namespace = job.Namespace;
  return job.TaskGroups.flatMap((group) => {
    const scaling = group.Scaling;
    if (!scaling) return [];
    return [
      {
        ID: policyId(namespace, job.ID, group.Name),
        Type: HORIZONTAL,
        Target: { Namespace: namespace, Job: job.ID, Group: group.Name },
        Policy: scaling.Policy,
        Min: scaling.Min,
        Max: scaling.Max,
        Enabled: scaling.Enabled,
        CreateIndex: job.CreateIndex,
        ModifyIndex: job.JobModifyIndex,
      },
    ];
  });
}

const stub = ({ ID, Enabled, Type, Target, CreateIndex, ModifyIndex }: ScalingPolicy): ScalingPolicyListStub => ({ ID, Enabled, Type, Target, CreateIndex, ModifyIndex });

export class ScalingPolicyEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** GET /v1/scaling/policies: stubs by ID, as Nomad's table orders them. */
  list(query: ScalingPolicyQuery): ScalingPolicyListStub[] {
    const jobs = [...this.withPolicies()].filter((job) => (query.job === "" || job.ID === query.job) && query.inNamespace(job.Namespace));
    return jobs
      .flatMap(policiesOf)
      .filter((policy) => (query.job === "" ? policy.Type.startsWith(query.type) : query.type === "" || policy.Type === query.type))
      .sort((a, b) => (a.ID < b.ID ? -1 : 1))
      .map(stub);
  }

  /** Every job that may have scaling policies: a finished job (only in SQLite) is read only when it has one. */
  private *withPolicies(): IterableIterator<Job> {
    const { store } = this.ctx;
    yield* store.read.jobs.hotValues();
    for (const [id, cold] of store.coldJobs) if (cold.scaled) yield store.read.jobs.get(id)!;
  }

  /** GET /v1/scaling/policy/:id. */
  get(id: string): ScalingPolicy {
    for (const job of this.withPolicies()) {
      const found = policiesOf(job).find((policy) => policy.ID === id);
      if (found) return found;
    }
    throw notFound("policy");
  }
}
