/**
 * SQLite for the state databases: bun:sqlite under Drizzle. Callers get the
 * Drizzle handle typed by their schema and a small raw interface for the
 * pragmas and checks that run before any migration.
 */
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
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

export function openSqlite<Schema extends Record<string, unknown>>(
  path: string,
  schema: Schema,
  options: { readonly?: boolean } = {},
): OpenedSqlite<Schema> {
  const database = options.readonly
    ? new Database(path, { readonly: true, strict: true })
    : new Database(path, { create: true, readwrite: true, strict: true });
  // Drizzle prepares a new statement for every query; bun:sqlite's query()
  // keeps one per SQL text. Statements are only ever used one at a time here
  // (synchronously), so sharing them is safe, and it took statement preparation
  // out of the busiest paths (task start, status reports).
  database.prepare = database.query.bind(database) as Database["prepare"];
  const raw: RawSqlite = {
    exec: (sql) => database.run(sql),
    all: <Row>(sql: string, ...params: (string | number | null)[]) => database.query(sql).all(...params) as Row[],
    transaction: <T>(fn: () => T) => database.transaction(fn).immediate(),
    close: () => database.close(),
  };
  return { db: drizzle({ client: database, schema }), raw };
}
