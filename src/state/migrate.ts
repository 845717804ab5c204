/**
 * Brings a state database to this binary's schema, refusing anything it
 * cannot use safely. The bookkeeping table is drizzle's own
 * (`__drizzle_migrations`: hash, created_at), so drizzle-kit sees the same
 * history we do.
 *
 *   open ──> integrity check ──> known history? ──> apply pending (one transaction)
 *               │ corrupt            │ a migration this binary lacks
 *               ▼                    ▼
 *           StateDbError         StateDbError (database is newer)
 *
 * On refusal nothing has been written: the checks only read.
 */
import type { RawSqlite } from "../runtime/sqlite.ts";

export interface EmbeddedMigration {
  tag: string;
  /** drizzle-kit's journal timestamp; the order of application. */
  when: number;
  /** sha256 of the SQL file, as drizzle records it. */
  hash: string;
  sql: string;
}

const MIGRATIONS_TABLE = "__drizzle_migrations";
const STATEMENT_BREAKPOINT = "--> statement-breakpoint";

/** A state database this binary must not open; the message says why and what to do. */
export class StateDbError extends Error {
  override name = "StateDbError";
}

export function checkIntegrity(raw: RawSqlite, path: string): void {
  let result: { quick_check: string }[];
  try {
    result = raw.all<{ quick_check: string }>("PRAGMA quick_check");
  } catch (err) {
    throw new StateDbError(
      `state database ${path} is unreadable (${err instanceof Error ? err.message : String(err)}); ` +
        "it was left untouched: move it aside to start with empty state, or restore a backup",
    );
  }
  const problems = result.map((row) => row.quick_check).filter((line) => line !== "ok");
  if (problems.length > 0) {
    throw new StateDbError(
      `state database ${path} is corrupt (${problems.slice(0, 3).join("; ")}); ` +
        "it was left untouched: move it aside to start with empty state, or restore a backup",
    );
  }
}

function appliedHashes(raw: RawSqlite): { hash: string; created_at: number }[] {
  const exists = raw.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", MIGRATIONS_TABLE);
  if (exists.length === 0) return [];
  return raw.all<{ hash: string; created_at: number }>(`SELECT hash, created_at FROM ${MIGRATIONS_TABLE} ORDER BY created_at`);
}

/** Applies every embedded migration the database lacks, after the checks above. */
export function migrate(raw: RawSqlite, path: string, migrations: readonly EmbeddedMigration[]): { applied: string[] } {
  checkIntegrity(raw, path);
  const known = new Set(migrations.map((m) => m.hash));
  const applied = appliedHashes(raw);
  const unknown = applied.filter((row) => !known.has(row.hash));
  if (unknown.length > 0) {
    throw new StateDbError(
      `state database ${path} was written by a newer drover (${unknown.length} migration(s) this binary does not know); ` +
        "it was left untouched: run the newer drover, or move the database aside to start with empty state",
    );
  }
  const done = new Set(applied.map((row) => row.hash));
  const pending = migrations.filter((m) => !done.has(m.hash));
  if (pending.length === 0) return { applied: [] };
  raw.transaction(() => {
    raw.exec(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
    for (const migration of pending) {
      for (const statement of migration.sql.split(STATEMENT_BREAKPOINT)) {
        if (statement.trim()) raw.exec(statement);
      }
      raw.all(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES (?, ?)`, migration.hash, migration.when);
    }
  });
  return { applied: pending.map((m) => m.tag) };
}
