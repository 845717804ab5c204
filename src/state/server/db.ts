/**
 * The embedded server's state database at `<data_dir>/server/state.db`.
 */
import { join } from "node:path";
import type { OpenedSqlite } from "../../runtime/sqlite.ts";
import { openStateDb } from "../open.ts";
import { migrations } from "./migrations/index.ts";
import * as schema from "./schema.ts";

export type ServerSchema = typeof schema;
export type ServerStateDb = OpenedSqlite<ServerSchema>;

export function serverStatePath(dataDir: string): string {
  return join(dataDir, "server", "state.db");
}

export function openServerState(dataDir: string): ServerStateDb {
  return openStateDb(serverStatePath(dataDir), schema, migrations);
}
