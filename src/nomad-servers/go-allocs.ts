/**
 * Allocations between a Nomad server's structs and drover's: in, a server's
 * alloc (with its job version) read into drover's Allocation, every field
 * drover does not run dropped and Go's nil values given their zero value,
 * then checked against the schema, so a job drover cannot run is refused by
 * name (driver, job type, ...) rather than half-run; out, the client's
 * report as the stripped alloc Nomad's client sends with Node.UpdateAlloc.
 */
import { AllocationSchema, type Allocation } from "../structs/alloc.ts";
import { AllocClientUpdateSchema, type AllocClientUpdate } from "../structs/api.ts";
import { parseOrThrow } from "../lib/validation.ts";
import { fromGo, goStrings, isoToGoTime, toGo } from "./go-values.ts";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

/** Nomad leaves a group network's mode empty for the host's network. */
function defaultNetworkModes(networks: unknown): void {
  if (!Array.isArray(networks)) return;
  for (const network of networks) if (isRecord(network) && (network.Mode === "" || network.Mode === undefined)) network.Mode = "host";
}

/** The alloc's ID, for naming it in an error, from a value not yet checked. */
export function goAllocId(raw: unknown): string {
  return isRecord(raw) ? String(goStrings(raw.ID) ?? "") : "";
}

export function allocFromGo(raw: unknown): Allocation {
  const alloc = fromGo(AllocationSchema, raw);
  if (isRecord(alloc)) {
    const job = alloc.Job;
    if (isRecord(job) && Array.isArray(job.TaskGroups)) {
      for (const group of job.TaskGroups) if (isRecord(group)) defaultNetworkModes(group.Networks);
    }
    const resources = alloc.AllocatedResources;
    if (isRecord(resources) && isRecord(resources.Shared)) defaultNetworkModes(resources.Shared.Networks);
  }
  return parseOrThrow(AllocationSchema, alloc, `allocation ${goAllocId(raw)} from the Nomad server`);
}

/** What Nomad's client sends of an alloc it reports on (client.go AllocStateUpdated): only what the client owns. */
export function goAllocUpdate(update: AllocClientUpdate, nodeId: string): Record<string, unknown> {
  const parsed = toGo(AllocClientUpdateSchema, update) as Record<string, unknown>;
  const deployment = update.DeploymentStatus;
  return {
    ...parsed,
    NodeID: nodeId,
    DeploymentStatus: deployment ? { ...deployment, Timestamp: isoToGoTime(deployment.Timestamp ?? null) } : null,
  };
}
