/**
 * The client's own record of its allocations: the version of each alloc it
 * acts on, the alloc runner's hook progress, and per task the state the API
 * shows and the task runner's hook progress. With the driver handles
 * (task-handles.ts) this is everything a restarted agent needs to carry on.
 *
 * Each write is one statement (its own transaction); new allocs arrive in
 * one transaction with their tasks' first states, and deleting an alloc takes
 * its task rows and handles with it in one transaction. The writes made for
 * every task (an alloc's, a task row's) are prepared once per database:
 * building the Drizzle query and having SQLite parse it at each write was
 * most of what a state write cost while hundreds of tasks start (issue 35).
 */
import { and, eq, sql } from "drizzle-orm";
import * as v from "valibot";
import { AllocationSchema, type Allocation } from "../../structs/alloc.ts";
import { zeroFill } from "../../structs/schema-walk.ts";
import { TaskStateSchema, type TaskState } from "../../structs/task-state.ts";
import { parseStoredValue } from "../rows.ts";
import type { ClientState } from "./db.ts";
import { perDatabase } from "../prepared.ts";
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

/** The statements run per alloc and per task, prepared (see above); each upsert sets only the columns it names. */
function prepareWrites(state: ClientState) {
  const taskKey = [taskRunnerStates.allocId, taskRunnerStates.taskName];
  const taskIds = { allocId: sql.placeholder("allocId"), taskName: sql.placeholder("taskName") };
  return {
    alloc: state.db
      .insert(allocations)
      .values({ id: sql.placeholder("id"), alloc: sql.placeholder("alloc") })
      .onConflictDoUpdate({ target: allocations.id, set: { alloc: sql`excluded.alloc` } })
      .prepare(),
    taskState: state.db
      .insert(taskRunnerStates)
      .values({ ...taskIds, state: sql.placeholder("state") })
      .onConflictDoUpdate({ target: taskKey, set: { state: sql`excluded.state` } })
      .prepare(),
    taskLocal: state.db
      .insert(taskRunnerStates)
      .values({ ...taskIds, local: sql.placeholder("local") })
      .onConflictDoUpdate({ target: taskKey, set: { local: sql`excluded.local` } })
      .prepare(),
    taskBoth: state.db
      .insert(taskRunnerStates)
      .values({ ...taskIds, state: sql.placeholder("state"), local: sql.placeholder("local") })
      .onConflictDoUpdate({ target: taskKey, set: { state: sql`excluded.state`, local: sql`excluded.local` } })
      .prepare(),
    allocLocal: state.db
      .update(allocations)
      // An update's set takes no placeholder as a column's value: the JSON text is passed as such.
      .set({ local: sql`${sql.placeholder("localJson")}` })
      .where(eq(allocations.id, sql.placeholder("id")))
      .prepare(),
    loadAllocLocal: state.db
      .select({ local: allocations.local })
      .from(allocations)
      .where(eq(allocations.id, sql.placeholder("id")))
      .prepare(),
  };
}

const writes = perDatabase(prepareWrites);

/** The statements that save an alloc and a task's row; callers run them inside state.write. */
function putAlloc(state: ClientState, alloc: Allocation): void {
  writes(state).alloc.run({ id: alloc.ID, alloc });
}

function putTaskRow(state: ClientState, allocId: string, taskName: string, set: { state?: TaskState; local?: TaskLocalState }): void {
  const prepared = writes(state);
  if (set.state && set.local) prepared.taskBoth.run({ allocId, taskName, state: set.state, local: set.local });
  else if (set.state) prepared.taskState.run({ allocId, taskName, state: set.state });
  else if (set.local) prepared.taskLocal.run({ allocId, taskName, local: set.local });
}

/** A task's stored states, checked. */
function parseTaskRow(allocId: string, taskName: string, row: { state: unknown; local: unknown } | undefined): { state: TaskState | null; local: TaskLocalState | null } {
  const what = `task ${taskName} of allocation ${allocId}`;
  return {
    state: row?.state == null ? null : parse(TaskStateSchema, row.state, `${what}: state`),
    local: row?.local == null ? null : parse(TaskLocalStateSchema, row.local, `${what}: runner state`),
  };
}

/** What a task runner starts from, as TaskStore.load gives it. */
export type StoredTask = ReturnType<TaskStore["load"]>;

/** An alloc as stored, with everything its runners start from. */
export interface StoredAlloc {
  alloc: Allocation;
  local: AllocLocalState | null;
  tasks: Map<string, StoredTask>;
}

/**
 * Every alloc this node runs with its runners' state and its tasks' states
 * and handles: three queries for the whole node, where each runner loading
 * its own costs three per task (an agent restarting with a thousand tasks).
 */
export function loadAllAllocs(state: ClientState): StoredAlloc[] {
  const stored = new Map<string, StoredAlloc>();
  for (const row of state.db.select().from(allocations).all()) {
    stored.set(row.id, {
      // An alloc stored before its job gained fields (Nomad 1.x's blocks) takes their zero values.
      alloc: parse(AllocationSchema, zeroFill(AllocationSchema, row.alloc), `allocation ${row.id}`),
      local: row.local == null ? null : parse(AllocLocalStateSchema, row.local, `allocation ${row.id}'s runner state`),
      tasks: new Map(),
    });
  }
  const task = (allocId: string, taskName: string): StoredTask | undefined => {
    const alloc = stored.get(allocId);
    if (!alloc) return undefined;
    let entry = alloc.tasks.get(taskName);
    if (!entry) {
      entry = { state: null, local: null, handleJson: null };
      alloc.tasks.set(taskName, entry);
    }
    return entry;
  };
  for (const row of state.db.select().from(taskRunnerStates).all()) {
    const entry = task(row.allocId, row.taskName);
    if (entry) Object.assign(entry, parseTaskRow(row.allocId, row.taskName, row));
  }
  for (const row of state.db.select({ allocId: taskHandles.allocId, taskName: taskHandles.taskName, handle: taskHandles.handle }).from(taskHandles).all()) {
    const entry = task(row.allocId, row.taskName);
    if (entry) entry.handleJson = row.handle;
  }
  return [...stored.values()];
}

/**
 * Allocs new to this node, each with the first state of its tasks, in one
 * transaction: all of them are recorded before any of them runs, or none is.
 */
export function saveNewAllocs(state: ClientState, entries: readonly Pick<StoredAlloc, "alloc" | "tasks">[]): void {
  state.write(() =>
    state.raw.transaction(() => {
      for (const { alloc, tasks } of entries) {
        putAlloc(state, alloc);
        for (const [taskName, { state: taskState }] of tasks) if (taskState) putTaskRow(state, alloc.ID, taskName, { state: taskState });
      }
    }),
  );
}

/**
 * The stores below are classes, their methods on the prototype: one lives as
 * long as its alloc or task runs, and an object of closures would cost each
 * of them its own functions and scope (issue 35: the agent's memory per task).
 */
class SqlAllocStore implements AllocStore {
  constructor(
    private readonly state: ClientState,
    private readonly allocId: string,
  ) {}

  saveAlloc(alloc: Allocation): void {
    this.state.write(() => putAlloc(this.state, alloc));
  }

  saveLocal(local: AllocLocalState): void {
    this.state.write(() => writes(this.state).allocLocal.run({ id: this.allocId, localJson: JSON.stringify(local) }));
  }

  loadLocal(): AllocLocalState | null {
    const local = writes(this.state).loadAllocLocal.get({ id: this.allocId })?.local;
    return local == null ? null : parse(AllocLocalStateSchema, local, `allocation ${this.allocId}'s runner state`);
  }

  delete(): void {
    const { state, allocId } = this;
    state.write(() =>
      state.raw.transaction(() => {
        state.db.delete(taskRunnerStates).where(eq(taskRunnerStates.allocId, allocId)).run();
        state.db.delete(taskHandles).where(eq(taskHandles.allocId, allocId)).run();
        state.db.delete(allocations).where(eq(allocations.id, allocId)).run();
      }),
    );
  }
}

export function allocStore(state: ClientState, allocId: string): AllocStore {
  return new SqlAllocStore(state, allocId);
}

class SqlTaskStore implements TaskStore {
  constructor(
    private readonly state: ClientState,
    private readonly allocId: string,
    private readonly taskName: string,
    private readonly driver: string,
  ) {}

  load(): ReturnType<TaskStore["load"]> {
    const { state, allocId, taskName } = this;
    // The where-clause is built here, not kept: the store lives as long as its task runs (issue 35).
    const row = state.db
      .select()
      .from(taskRunnerStates)
      .where(and(eq(taskRunnerStates.allocId, allocId), eq(taskRunnerStates.taskName, taskName)))
      .get();
    return { ...parseTaskRow(allocId, taskName, row), handleJson: loadTaskHandleJson(state, allocId, taskName) };
  }

  saveState(taskState: TaskState, local: TaskLocalState): void {
    this.upsert({ state: taskState, local });
  }

  saveLocal(local: TaskLocalState): void {
    this.upsert({ local });
  }

  saveHandle(handle: unknown): void {
    saveTaskHandle(this.state, { allocId: this.allocId, taskName: this.taskName, driver: this.driver, handle });
  }

  deleteHandle(): void {
    deleteTaskHandle(this.state, this.allocId, this.taskName);
  }

  private upsert(set: { state?: TaskState; local?: TaskLocalState }): void {
    this.state.write(() => putTaskRow(this.state, this.allocId, this.taskName, set));
  }
}

export function taskStore(state: ClientState, allocId: string, taskName: string, driver: string): TaskStore {
  return new SqlTaskStore(state, allocId, taskName, driver);
}
