/**
 * The task_handles table: each task's driver handle, saved the moment a
 * driver has started the task and read back when the agent restarts. The
 * handle is the driver's own JSON; the driver validates it on recovery.
 */
import { and, eq } from "drizzle-orm";
import type { ClientState } from "./db.ts";
import { taskHandles } from "./schema.ts";

export interface StoredHandle {
  allocId: string;
  taskName: string;
  driver: string;
  /** Parsed JSON, checked by the driver's own schema before use. */
  handle: unknown;
}

/** Inserts or replaces the handle of (allocId, taskName). */
export function saveTaskHandle(state: ClientState, stored: StoredHandle): void {
  const row = { ...stored, handle: JSON.stringify(stored.handle), updatedAt: Date.now() };
  state.write(() =>
    state.db
      .insert(taskHandles)
      .values(row)
      .onConflictDoUpdate({ target: [taskHandles.allocId, taskHandles.taskName], set: { driver: row.driver, handle: row.handle, updatedAt: row.updatedAt } })
      .run(),
  );
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
