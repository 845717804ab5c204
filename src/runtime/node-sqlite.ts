/**
 * runtime/sqlite.ts over node:sqlite, which Deno and Bun both provide. Drizzle
 * 0.45 has no node:sqlite driver, but its bun-sqlite session only needs a
 * client shaped like bun:sqlite's Database (prepare → run / all / values,
 * exec, transaction); this module gives node:sqlite that shape. Statements are
 * kept per SQL text, as bun/sqlite.ts does: Drizzle prepares one per query.
 */
import { createTableRelationsHelpers, extractTablesRelationalConfig } from "drizzle-orm";
import { SQLiteBunSession } from "drizzle-orm/bun-sqlite/session";
import { BaseSQLiteDatabase, SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import type { OpenSqlite, RawSqlite, SqliteDb } from "./sqlite.ts";

/** One SQL text's statements: rows as objects, and as arrays for Drizzle's `values`. */
class Statement {
  private arrays: StatementSync | undefined;

  constructor(
    private readonly database: DatabaseSync,
    private readonly sql: string,
    private readonly objects: StatementSync,
  ) {}

  run(...params: SQLInputValue[]) {
    return this.objects.run(...params);
  }

  all(...params: SQLInputValue[]) {
    return this.objects.all(...params);
  }

  get(...params: SQLInputValue[]) {
    return this.objects.get(...params);
  }

  values(...params: SQLInputValue[]) {
    if (!this.arrays) {
      this.arrays = this.database.prepare(this.sql);
      this.arrays.setReturnArrays(true);
    }
    return this.arrays.all(...params);
  }
}

type Behavior = "deferred" | "immediate" | "exclusive";

/** A bun:sqlite-shaped client over one node:sqlite connection. */
class Client {
  private readonly statements = new Map<string, Statement>();
  private depth = 0;

  constructor(readonly database: DatabaseSync) {}

  exec(sql: string): void {
    this.database.exec(sql);
  }

  prepare(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = new Statement(this.database, sql, this.database.prepare(sql));
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** bun:sqlite's transaction(): a function to call as `.deferred()`, `.immediate()` or `.exclusive()`; nested calls use savepoints. */
  transaction<T>(fn: () => T): Record<Behavior, () => T> {
    const run = (behavior: Behavior) => () => this.inTransaction(behavior, fn);
    return { deferred: run("deferred"), immediate: run("immediate"), exclusive: run("exclusive") };
  }

  private inTransaction<T>(behavior: Behavior, fn: () => T): T {
    const savepoint = this.depth > 0 ? `drover_sp${this.depth}` : null;
    this.database.exec(savepoint ? `SAVEPOINT ${savepoint}` : `BEGIN ${behavior.toUpperCase()}`);
    this.depth++;
    try {
      const result = fn();
      this.depth--;
      this.database.exec(savepoint ? `RELEASE ${savepoint}` : "COMMIT");
      return result;
    } catch (err) {
      this.depth--;
      this.database.exec(savepoint ? `ROLLBACK TO ${savepoint}; RELEASE ${savepoint}` : "ROLLBACK");
      throw err;
    }
  }

  close(): void {
    this.statements.clear();
    this.database.close();
  }
}

export const openSqlite: OpenSqlite = (path, schema, options = {}) => {
  const client = new Client(new DatabaseSync(path, { readOnly: options.readonly ?? false }));
  const dialect = new SQLiteSyncDialect();
  const tables = extractTablesRelationalConfig(schema, createTableRelationsHelpers);
  const relational = { fullSchema: schema, schema: tables.tables, tableNamesMap: tables.tableNamesMap };
  const session = new SQLiteBunSession(client as never, dialect, relational, {});
  const db = new BaseSQLiteDatabase("sync", dialect, session as never, relational) as SqliteDb<typeof schema>;
  const raw: RawSqlite = {
    exec: (sql) => client.exec(sql),
    all: <Row>(sql: string, ...params: (string | number | null)[]) => client.prepare(sql).all(...params) as Row[],
    transaction: <T>(fn: () => T) => client.transaction(fn).immediate(),
    close: () => client.close(),
  };
  return { db, raw };
};
