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

/** Every namespace: lists that the caller does not narrow (the in-process client, tests). */
export const EVERY_NAMESPACE = (): boolean => true;

/**
 * `items` whose ID starts with `prefix` (all without one) in the namespaces
 * `inNamespace` accepts, sorted by ID: Nomad's ?prefix= and ?namespace= lists.
 */
export function byPrefix<T extends { ID: string; Namespace?: string }>(
  items: Iterable<T>,
  prefix: string | undefined,
  inNamespace: (namespace: string) => boolean = EVERY_NAMESPACE,
): T[] {
  const out: T[] = [];
  for (const item of items) if ((!prefix || item.ID.startsWith(prefix)) && (item.Namespace === undefined || inNamespace(item.Namespace))) out.push(item);
  return out.sort((a, b) => a.ID.localeCompare(b.ID));
}
