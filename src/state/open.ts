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

/**
 * Each connection's page cache, in KiB (SQLite's default is 2000). The agent
 * keeps what it reads often in its own memory (running work as objects,
 * finished work's list stubs), so its databases are mostly written to; the
 * default cache then only fills with written pages as the node grows, ~2 MiB
 * per database at a few hundred tasks (issue 35: the agent's memory per
 * task). 512 KiB still holds a launch slice's write (every alloc and task
 * row of it) without spilling to the WAL mid-transaction; a page not cached
 * is read back from the kernel's page cache.
 */
export const PAGE_CACHE_KIB = 512;

/**
 * WAL pages after which a commit checkpoints (SQLite's default is 1000). A
 * checkpoint runs on the committing thread, the agent's one JS thread, and
 * waits in two fsyncs (the WAL, then the database): a thousand tasks starting
 * commit some ten transactions each, and at 1000 pages that was 46 fsyncs
 * and 0.16-0.19 s of the thread's time on this machine's shared disk (9 and
 * 0.07 s at 4000). The pages a start rewrites again and again (the task rows)
 * are copied once per checkpoint, so fewer, larger checkpoints also copy less.
 * The WAL file keeps its largest size, up to ~16 MiB per database.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 4000;

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
    opened.raw.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    opened.raw.exec("PRAGMA foreign_keys = ON");
    // Negative: a size in KiB, whatever the page size.
    opened.raw.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`);
  } catch (err) {
    opened.raw.close();
    throw err;
  }
  return opened;
}
