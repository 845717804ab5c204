/** Resolving an alloc ID prefix and the task a command means, as Nomad's alloc commands do. */
import { allocTaskGroup, type Allocation, type AllocListStub } from "../../structs/alloc.ts";
import { UsageError } from "../flags.ts";
import { AgentError, type AgentClient } from "../http-client.ts";
import { resolveAlloc } from "../prefix.ts";

export async function fetchAlloc(client: AgentClient, prefix: string): Promise<Allocation> {
  const stub = await resolveAlloc(client, prefix);
  return (await client.get<Allocation>(`/v1/allocation/${encodeURIComponent(stub.ID)}`)).body;
}

export function taskNames(alloc: Allocation): string[] {
  return allocTaskGroup(alloc)?.Tasks.map((task) => task.Name) ?? [];
}

/** The named task (checked against the alloc), or its only task; a UsageError when that is ambiguous. */
export function chooseTask(alloc: Allocation, given: string | undefined): string {
  const names = taskNames(alloc);
  if (given !== undefined) {
    if (!names.includes(given)) throw new UsageError(`allocation ${alloc.ID.slice(0, 8)} has no task "${given}" (tasks: ${names.join(", ")})`);
    return given;
  }
  if (names.length === 1) return names[0]!;
  throw new UsageError(`allocation ${alloc.ID.slice(0, 8)} has ${names.length} tasks; name one: ${names.join(", ")}`);
}

/** Nomad's -job: a random running alloc of the job, or any of its allocs when none runs. */
export async function randomJobAlloc(client: AgentClient, job: string): Promise<string> {
  const { body: allocs } = await client.get<AllocListStub[]>(`/v1/job/${encodeURIComponent(job)}/allocations`);
  if (allocs.length === 0) throw new AgentError(404, `job "${job}" doesn't exist or it has no allocations`);
  const running = allocs.filter((alloc) => alloc.ClientStatus === "running");
  const pool = running.length > 0 ? running : allocs;
  return pool[Math.floor(Math.random() * pool.length)]!.ID;
}
