/** What every server endpoint works with: the state, the scheduler's dependencies, and the agent's region. */
import type { SchedulerDeps } from "../scheduler/evaluate.ts";
import type { StateStore } from "../state/store.ts";

export interface EndpointContext {
  store: StateStore;
  scheduler: SchedulerDeps;
  /** This agent's region; a job for another region is refused. */
  region: string;
  /** Throws a storage-full ServerError when the state disk is too full to take new work. */
  requireFreeSpace(action: string): void;
}

/** `items` whose ID starts with `prefix` (all without one), sorted by ID: Nomad's ?prefix= lists. */
export function byPrefix<T extends { ID: string }>(items: Iterable<T>, prefix: string | undefined): T[] {
  const out: T[] = [];
  for (const item of items) if (!prefix || item.ID.startsWith(prefix)) out.push(item);
  return out.sort((a, b) => a.ID.localeCompare(b.ID));
}
