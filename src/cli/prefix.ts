/**
 * IDs the way Nomad's CLI takes them: the full ID or any unique prefix
 * (Nomad shows the first 8 characters). An ambiguous prefix lists what it
 * matched; a prefix matching nothing says so.
 */
import type { AllocListStub } from "../structs/alloc.ts";
import type { Deployment } from "../structs/deployment.ts";
import type { Evaluation } from "../structs/evaluation.ts";
import type { JobListStub } from "../structs/job.ts";
import type { NodeListStub } from "../structs/node.ts";
import { AgentError, type AgentClient } from "./http-client.ts";

export class AmbiguousPrefixError extends Error {
  override name = "AmbiguousPrefixError";
}

/** Nomad's rule: an allocation or node ID prefix needs two characters at least. */
const MIN_UUID_PREFIX = 2;

async function resolve<T extends { ID: string }>(
  client: AgentClient,
  what: string,
  list: string,
  prefix: string,
  describe: (item: T) => string,
): Promise<T> {
  const { body } = await client.get<T[]>(list, { prefix });
  const exact = body.find((item) => item.ID === prefix);
  if (exact) return exact;
  if (body.length === 1) return body[0]!;
  if (body.length === 0) throw new AgentError(404, `no ${what} with prefix or ID "${prefix}" found`);
  throw new AmbiguousPrefixError(`prefix "${prefix}" matched ${body.length} ${what}s:\n${body.map((item) => `  ${describe(item)}`).join("\n")}`);
}

export function resolveJob(client: AgentClient, prefix: string): Promise<JobListStub> {
  return resolve<JobListStub>(client, "job", "/v1/jobs", prefix, (job) => `${job.ID} (${job.Status})`);
}

/** A UUID-keyed object by prefix, refused under Nomad's two characters. */
function resolveUuid<T extends { ID: string }>(client: AgentClient, what: string, list: string, prefix: string, describe: (item: T) => string): Promise<T> {
  if (prefix.length < MIN_UUID_PREFIX) throw new AgentError(400, `${/^[aeiou]/.test(what) ? "an" : "a"} ${what} ID prefix needs at least ${MIN_UUID_PREFIX} characters`);
  return resolve<T>(client, what, list, prefix, describe);
}

export function resolveAlloc(client: AgentClient, prefix: string): Promise<AllocListStub> {
  return resolveUuid<AllocListStub>(client, "allocation", "/v1/allocations", prefix, (alloc) => `${alloc.ID} ${alloc.Name} (${alloc.ClientStatus})`);
}

export function resolveNode(client: AgentClient, prefix: string): Promise<NodeListStub> {
  return resolveUuid<NodeListStub>(client, "node", "/v1/nodes", prefix, (node) => `${node.ID} ${node.Name} (${node.Status})`);
}

export function resolveEval(client: AgentClient, prefix: string): Promise<Evaluation> {
  return resolveUuid<Evaluation>(client, "evaluation", "/v1/evaluations", prefix, (evaluation) => `${evaluation.ID} ${evaluation.JobID} (${evaluation.Status})`);
}

export function resolveDeployment(client: AgentClient, prefix: string): Promise<Deployment> {
  return resolveUuid<Deployment>(client, "deployment", "/v1/deployments", prefix, (deployment) => `${deployment.ID} ${deployment.JobID} (${deployment.Status})`);
}
