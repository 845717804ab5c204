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
import type { DeploymentWatch } from "./deployment-health.ts";
import { fromGo, goStrings, isoToGoTime, toGo } from "./go-values.ts";
import { NS_PER_MS } from "../lib/units.ts";

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

/** Nomad's DefaultMigrateStrategy, for a group without a migrate block. */
const DEFAULT_MIGRATE = { MinHealthyTime: 10_000 * NS_PER_MS, HealthyDeadline: 300_000 * NS_PER_MS };

/**
 * The health watch an alloc needs (Nomad's health hook): every service alloc
 * without a verdict yet, timed by its group's update block when a deployment
 * placed it, else by its migrate block (a drain moves allocs on only as the
 * ones before them turn healthy). None for a deployment whose health is set
 * by hand.
 */
export function deploymentWatch(raw: unknown): DeploymentWatch | undefined {
  const alloc = goStrings(raw);
  if (!isRecord(alloc)) return undefined;
  const status = isRecord(alloc.DeploymentStatus) ? alloc.DeploymentStatus : undefined;
  if (typeof status?.Healthy === "boolean") return undefined;
  const job = isRecord(alloc.Job) ? alloc.Job : undefined;
  if (job?.Type !== "service") return undefined;
  const groups = Array.isArray(job.TaskGroups) ? job.TaskGroups.filter(isRecord) : [];
  const group = groups.find((candidate) => candidate.Name === alloc.TaskGroup);
  if (!group) return undefined;
  const deploying = typeof alloc.DeploymentID === "string" && alloc.DeploymentID !== "";
  const update = isRecord(group.Update) ? group.Update : undefined;
  if (deploying && (!update || update.HealthCheck === "manual")) return undefined;
  const timing = deploying ? update! : isRecord(group.Migrate) ? group.Migrate : DEFAULT_MIGRATE;
  const tasks = Array.isArray(group.Tasks) ? group.Tasks.filter(isRecord) : [];
  return {
    minHealthyMs: Number(timing.MinHealthyTime ?? 0) / NS_PER_MS,
    deadlineMs: Number(timing.HealthyDeadline ?? 0) / NS_PER_MS,
    mainTasks: tasks.filter((task) => !isRecord(task.Lifecycle) || task.Lifecycle.Sidecar === true).map((task) => String(task.Name)),
    canary: status?.Canary === true,
  };
}
