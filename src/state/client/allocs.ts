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
import * as v from "valibot";
import { AllocationSchema, type Allocation } from "../../structs/alloc.ts";
import { TaskStateSchema, type TaskState } from "../../structs/task-state.ts";
import { parseStoredValue } from "../rows.ts";
import type { ClientState } from "./db.ts";
import { AllocLocalStateSchema, TaskLocalStateSchema, type AllocLocalState, type TaskLocalState } from "./local-state.ts";
import { allocations, taskHandles, taskRunnerStates } from "./schema.ts";
import { deleteTaskHandle, loadTaskHandleJson, saveTaskHandle } from "./task-handles.ts";

/** Where an alloc runner keeps what must survive a crash of the agent. */
export interface AllocStore {
  saveAlloc(alloc: Allocation): void;
  saveLocal(local: AllocLocalState): void;
  loadLocal(): AllocLocalState | null;
  /** Forgets the alloc and everything of its tasks. */
  delete(): void;
}

/** Where a task runner keeps what must survive a crash of the agent. */
export interface TaskStore {
  /** `handleJson` is the driver's handle as stored; the driver checks it before use. */
  load(): { state: TaskState | null; local: TaskLocalState | null; handleJson: string | null };
  /** The API-visible state and the runner's own, in one write: a crash keeps both or neither. */
  saveState(state: TaskState, local: TaskLocalState): void;
  saveLocal(local: TaskLocalState): void;
  saveHandle(handle: unknown): void;
  deleteHandle(): void;
}

const parse = <S extends v.GenericSchema>(schema: S, value: unknown, what: string): v.InferOutput<S> =>
  parseStoredValue("client", schema, value, what);

/** Every alloc this node runs, as last saved; each runner loads its own local state. */
export function listAllocs(state: ClientState): Allocation[] {
  return state.db
    .select({ id: allocations.id, alloc: allocations.alloc })
    .from(allocations)
    .all()
    .map((row) => parse(AllocationSchema, row.alloc, `allocation ${row.id}`));
}

export function allocStore(state: ClientState, allocId: string): AllocStore {
  return {
    saveAlloc(alloc) {
      state.write(() =>
        state.db
          .insert(allocations)
          .values({ id: alloc.ID, alloc })
          .onConflictDoUpdate({ target: allocations.id, set: { alloc } })
          .run(),
      );
    },
    saveLocal(local) {
      state.write(() => state.db.update(allocations).set({ local }).where(eq(allocations.id, allocId)).run());
    },
    loadLocal() {
      const local = state.db.select({ local: allocations.local }).from(allocations).where(eq(allocations.id, allocId)).get()?.local;
      return local == null ? null : parse(AllocLocalStateSchema, local, `allocation ${allocId}'s runner state`);
    },
    delete() {
      state.write(() =>
        state.raw.transaction(() => {
        state.db.delete(taskRunnerStates).where(eq(taskRunnerStates.allocId, allocId)).run();
        state.db.delete(taskHandles).where(eq(taskHandles.allocId, allocId)).run();
          state.db.delete(allocations).where(eq(allocations.id, allocId)).run();
        }),
      );
    },
  };
}

export function taskStore(state: ClientState, allocId: string, taskName: string, driver: string): TaskStore {
  const where = and(eq(taskRunnerStates.allocId, allocId), eq(taskRunnerStates.taskName, taskName));
  const upsert = (set: { state?: TaskState; local?: TaskLocalState }) =>
    state.write(() =>
      state.db
        .insert(taskRunnerStates)
        .values({ allocId, taskName, ...set })
        .onConflictDoUpdate({ target: [taskRunnerStates.allocId, taskRunnerStates.taskName], set })
        .run(),
    );
  return {
    load() {
      const row = state.db.select().from(taskRunnerStates).where(where).get();
      const what = `task ${taskName} of allocation ${allocId}`;
      return {
        state: row?.state == null ? null : parse(TaskStateSchema, row.state, `${what}: state`),
        local: row?.local == null ? null : parse(TaskLocalStateSchema, row.local, `${what}: runner state`),
        handleJson: loadTaskHandleJson(state, allocId, taskName),
      };
    },
    saveState: (taskState, local) => upsert({ state: taskState, local }),
    saveLocal: (local) => upsert({ local }),
    saveHandle: (handle) => saveTaskHandle(state, { allocId, taskName, driver, handle }),
    deleteHandle: () => deleteTaskHandle(state, allocId, taskName),
  };
}
