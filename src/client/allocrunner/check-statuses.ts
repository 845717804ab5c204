/**
 * The latest result of every service check of one alloc's tasks, written by
 * the tasks' service hooks and read by the alloc's health watcher
 * (health_check = "checks"), which is told of each change, and by
 * GET /v1/client/allocation/:id/checks (each result in Nomad's shape).
 */
import type { AllocCheckStatus } from "../../structs/check-status.ts";
import { ListenerList } from "../../lib/listener-list.ts";

export type CheckStatus = "passing" | "warning" | "critical";

export class CheckStatuses {
  // Made with the first check: most allocs have none, and one of these lives per running alloc
  // (issue 35: the agent's memory per task).
  private statuses: Map<string, CheckStatus> | undefined;
  private results: Map<string, AllocCheckStatus> | undefined;
  private readonly listeners = new ListenerList<() => void>();

  /** Records a check's result; `key` names the task, service and check; `result` is what the API shows of it. */
  set(key: string, status: CheckStatus, result?: AllocCheckStatus): void {
    if (result) (this.results ??= new Map()).set(key, result);
    const statuses = (this.statuses ??= new Map());
    if (statuses.get(key) === status) return;
    statuses.set(key, status);
    this.changed();
  }

  /** Forgets the checks whose keys start with `prefix` (a task's, when its services are deregistered). */
  remove(prefix: string): void {
    let removed = false;
    const { results, statuses } = this;
    if (results) for (const key of [...results.keys()]) if (key.startsWith(prefix)) results.delete(key);
    if (statuses) for (const key of [...statuses.keys()]) if (key.startsWith(prefix)) removed = statuses.delete(key) || removed;
    if (removed) this.changed();
  }

  /** Whether every known check passes (true when there are none). */
  allPassing(): boolean {
    for (const status of this.statuses?.values() ?? []) if (status !== "passing") return false;
    return true;
  }

  /** Every check's latest result by its ID (Nomad's AllocCheckStatuses). */
  byId(): Record<string, AllocCheckStatus> {
    return Object.fromEntries([...(this.results?.values() ?? [])].map((result) => [result.ID, result]));
  }

  get size(): number {
    return this.statuses?.size ?? 0;
  }

  onChange(listener: () => void): () => void {
    return this.listeners.add(listener);
  }

  private changed(): void {
    this.listeners.forEach((listener) => listener());
  }
}
