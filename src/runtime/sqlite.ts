/**
 * SQLite for the state databases, under Drizzle. Callers get the Drizzle
 * handle typed by their schema and a small raw interface for the pragmas and
 * checks that run before any migration. Bun uses bun:sqlite (bun/sqlite.ts),
 * Deno node:sqlite (node-sqlite.ts); both behind Drizzle's synchronous API.
 */
import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";

/** A synchronous Drizzle database over `Schema` (driver-neutral type). */
export type SqliteDb<Schema extends Record<string, unknown>> = BaseSQLiteDatabase<"sync", unknown, Schema>;

export interface RawSqlite {
  exec(sql: string): void;
  all<Row>(sql: string, ...params: (string | number | null)[]): Row[];
  /** Runs `fn` in one IMMEDIATE transaction: all of it lands or none does. */
  transaction<T>(fn: () => T): T;
  close(): void;
}

export interface OpenedSqlite<Schema extends Record<string, unknown>> {
  db: SqliteDb<Schema>;
  raw: RawSqlite;
}

export type OpenSqlite = <Schema extends Record<string, unknown>>(
  path: string,
  schema: Schema,
  options?: { readonly?: boolean },
) => OpenedSqlite<Schema>;

export { openSqlite } from "@drover/runtime/sqlite.ts";
