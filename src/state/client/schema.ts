/**
 * The client state database: what must survive a crash of the agent. Each
 * table is added by the migration that introduced it (src/state/client/migrations).
 */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { Allocation } from "../../structs/alloc.ts";
import type { TaskState } from "../../structs/task-state.ts";
import type { AllocLocalState, TaskLocalState } from "./local-state.ts";

/** Facts about the database itself, such as which drover version last opened it. */
export const agentMeta = sqliteTable("agent_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * Driver handles (reattach configs), one per task, written by the task runner
 * right after a driver starts the task; a new agent recovers tasks from them.
 * `handle` is the driver's JSON, opaque here: the driver checks it on recovery.
 */
export const taskHandles = sqliteTable(
  "task_handles",
  {
    allocId: text("alloc_id").notNull(),
    taskName: text("task_name").notNull(),
    driver: text("driver").notNull(),
    handle: text("handle").notNull(),
    /** Milliseconds since the epoch. */
    updatedAt: integer("updated_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.allocId, table.taskName] })],
);

/**
 * The allocations this node runs: the version the client acts on (with its
 * job) and the alloc runner's hook progress. Written before an alloc runs, so
 * a restarted agent knows every alloc it may have started.
 */
export const allocations = sqliteTable("allocations", {
  id: text("id").primaryKey(),
  alloc: text("alloc", { mode: "json" }).$type<Allocation>().notNull(),
  local: text("local", { mode: "json" }).$type<AllocLocalState>(),
});

/** Per task: the state the API shows (Nomad's TaskState) and the task runner's hook progress. */
export const taskRunnerStates = sqliteTable(
  "task_runner_states",
  {
    allocId: text("alloc_id").notNull(),
    taskName: text("task_name").notNull(),
    state: text("state", { mode: "json" }).$type<TaskState>(),
    local: text("local", { mode: "json" }).$type<TaskLocalState>(),
  },
  (table) => [primaryKey({ columns: [table.allocId, table.taskName] })],
);
