/**
 * Opens a state database: creates its folder, checks and migrates it, and sets
 * the pragmas every drover database uses.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { openSqlite, type OpenedSqlite } from "../runtime/sqlite.ts";
import { migrate, StateDbError, type EmbeddedMigration } from "./migrate.ts";

/**
 * How long a writer waits for a lock held by another connection (the CLI
 * reading while the agent writes) before failing.
 */
export const BUSY_TIMEOUT_MS = 5_000;

export function openStateDb<Schema extends Record<string, unknown>>(
  path: string,
  schema: Schema,
  migrations: readonly EmbeddedMigration[],
): OpenedSqlite<Schema> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let opened: OpenedSqlite<Schema>;
  try {
    opened = openSqlite(path, schema);
  } catch (err) {
    throw new StateDbError(`cannot open state database ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    opened.raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(opened.raw, path, migrations);
    // WAL + NORMAL survives a SIGKILL of the agent with no committed row lost
    // (measured); only a power loss can drop the newest transactions.
    opened.raw.exec("PRAGMA journal_mode = WAL");
    opened.raw.exec("PRAGMA synchronous = NORMAL");
    opened.raw.exec("PRAGMA foreign_keys = ON");
  } catch (err) {
    opened.raw.close();
    throw err;
  }
  return opened;
}
