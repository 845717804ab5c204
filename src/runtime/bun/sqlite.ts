/** runtime/sqlite.ts on Bun: bun:sqlite under Drizzle's bun-sqlite driver. */
import { Database } from "bun:sqlite";
import { drizzle } from "drizzle-orm/bun-sqlite";
import type { OpenSqlite, RawSqlite, SqliteDb } from "../sqlite.ts";

export const openSqlite: OpenSqlite = (path, schema, options = {}) => {
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
  return { db: drizzle({ client: database, schema }) as SqliteDb<typeof schema>, raw };
};
