/**
 * The client's own record of its allocations: the version of each alloc it
 * acts on, the alloc runner's hook progress, and per task the state the API
 * shows and the task runner's hook progress. With the driver handles
 * (task-handles.ts) this is everything a restarted agent needs to carry on.
 *
 * Each write is one statement (its own transaction); deleting an alloc takes
 * its task rows and handles with it in one transaction.
 */
import { and, eq } from "drizzle-orm";
import type { AllocLocalState, AllocRunnerStore } from "../../client/allocrunner/alloc-runner.ts";
import type { TaskLocalState, TaskRunnerStore } from "../../client/taskrunner/task-runner.ts";
import { TaskHandleSchema, type TaskHandle } from "../../drivers/handle.ts";
import type { Allocation } from "../../structs/alloc.ts";
import type { TaskState } from "../../structs/task-state.ts";
import * as v from "valibot";
import type { ClientState } from "./db.ts";
import { allocations, taskHandles, taskRunnerStates } from "./schema.ts";
import { deleteTaskHandle, loadTaskHandle, saveTaskHandle, type StoredHandle } from "./task-handles.ts";

/** Every alloc this node runs, as last saved; each runner loads its own local state. */
export function listAllocs(state: ClientState): Allocation[] {
  return state.db
    .select({ alloc: allocations.alloc })
    .from(allocations)
    .all()
    .map((row) => row.alloc);
}

export function allocStore(state: ClientState, allocId: string): AllocRunnerStore {
  return {
    saveAlloc(alloc) {
      state.db
        .insert(allocations)
        .values({ id: alloc.ID, alloc })
        .onConflictDoUpdate({ target: allocations.id, set: { alloc } })
        .run();
    },
    saveLocal(local) {
      state.db.update(allocations).set({ local }).where(eq(allocations.id, allocId)).run();
    },
    loadLocal() {
      return state.db.select({ local: allocations.local }).from(allocations).where(eq(allocations.id, allocId)).get()?.local ?? null;
    },
    delete() {
      state.raw.transaction(() => {
        state.db.delete(taskRunnerStates).where(eq(taskRunnerStates.allocId, allocId)).run();
        state.db.delete(taskHandles).where(eq(taskHandles.allocId, allocId)).run();
        state.db.delete(allocations).where(eq(allocations.id, allocId)).run();
      });
    },
  };
}

export function taskStore(state: ClientState, allocId: string, taskName: string, driver: string): TaskRunnerStore {
  const where = and(eq(taskRunnerStates.allocId, allocId), eq(taskRunnerStates.taskName, taskName));
  const upsert = (set: { state?: TaskState; local?: TaskLocalState }) =>
    state.db
      .insert(taskRunnerStates)
      .values({ allocId, taskName, ...set })
      .onConflictDoUpdate({ target: [taskRunnerStates.allocId, taskRunnerStates.taskName], set })
      .run();
  return {
    load() {
      const row = state.db.select().from(taskRunnerStates).where(where).get();
      return { state: row?.state ?? null, local: row?.local ?? null, ...readHandle(state, allocId, taskName) };
    },
    saveState: (taskState) => upsert({ state: taskState }),
    saveLocal: (local) => upsert({ local }),
    saveHandle: (handle) => saveTaskHandle(state, { allocId, taskName, driver, handle }),
    deleteHandle: () => deleteTaskHandle(state, allocId, taskName),
  };
}

/** The task's stored handle when this binary can use it; otherwise why not, for the task runner to report. */
function readHandle(state: ClientState, allocId: string, taskName: string): { handle: TaskHandle | null; handleProblem?: string } {
  let stored: StoredHandle | null;
  try {
    stored = loadTaskHandle(state, allocId, taskName);
  } catch (err) {
    return { handle: null, handleProblem: `not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (!stored) return { handle: null };
  const parsed = v.safeParse(TaskHandleSchema, stored.handle);
  return parsed.success ? { handle: parsed.output } : { handle: null, handleProblem: v.summarize(parsed.issues) };
}
