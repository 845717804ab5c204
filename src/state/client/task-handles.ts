/**
 * The task_handles table: each task's driver handle, saved the moment a
 * driver has started the task and read back when the agent restarts. The
 * handle is the driver's own JSON; the driver validates it on recovery.
 */
import { and, eq, sql } from "drizzle-orm";
import type { ClientState } from "./db.ts";
import { perDatabase } from "../prepared.ts";
import { taskHandles } from "./schema.ts";

export interface StoredHandle {
  allocId: string;
  taskName: string;
  driver: string;
  /** Parsed JSON, checked by the driver's own schema before use. */
  handle: unknown;
}

/** The upsert, prepared once per database: one is made for every task started (see allocs.ts). */
function prepareSave(state: ClientState) {
  const column = (name: keyof typeof taskHandles.$inferInsert) => sql.placeholder(name);
  return state.db
    .insert(taskHandles)
    .values({ allocId: column("allocId"), taskName: column("taskName"), driver: column("driver"), handle: column("handle"), updatedAt: column("updatedAt") })
    .onConflictDoUpdate({
      target: [taskHandles.allocId, taskHandles.taskName],
      set: { driver: sql`excluded.driver`, handle: sql`excluded.handle`, updatedAt: sql`excluded.updated_at` },
    })
    .prepare();
}

const prepared = perDatabase(prepareSave);

/** Inserts or replaces the handle of (allocId, taskName). */
export function saveTaskHandle(state: ClientState, stored: StoredHandle): void {
  const save = prepared(state);
  const row = { ...stored, handle: JSON.stringify(stored.handle), updatedAt: Date.now() };
  state.write(() => save.run(row));
}

/** The stored handle's JSON text, unparsed: the driver parses and checks it. */
export function loadTaskHandleJson(state: ClientState, allocId: string, taskName: string): string | null {
  const row = state.db
    .select({ handle: taskHandles.handle })
    .from(taskHandles)
    .where(and(eq(taskHandles.allocId, allocId), eq(taskHandles.taskName, taskName)))
    .get();
  return row?.handle ?? null;
}

export function listTaskHandles(state: ClientState): StoredHandle[] {
  return state.db.select().from(taskHandles).all().map(toStored);
}

export function deleteTaskHandle(state: ClientState, allocId: string, taskName: string): void {
  state.write(() =>
    state.db
      .delete(taskHandles)
      .where(and(eq(taskHandles.allocId, allocId), eq(taskHandles.taskName, taskName)))
      .run(),
  );
}

function toStored(row: typeof taskHandles.$inferSelect): StoredHandle {
  return { allocId: row.allocId, taskName: row.taskName, driver: row.driver, handle: JSON.parse(row.handle) as unknown };
}
