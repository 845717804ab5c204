/**
 * The client state database: what must survive a crash of the agent. Each
 * table is added by the migration that introduced it (src/state/client/migrations).
 */
import { integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Facts about the database itself, such as which drover version last opened it. */
export const agentMeta = sqliteTable("agent_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * Driver handles (reattach configs), one per task, written by the task runner
 * right after a driver starts the task; a new agent recovers tasks from them.
 * `handle` is the driver's JSON (src/drivers/handle.ts), opaque here.
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
