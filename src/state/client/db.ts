/**
 * The client state database at `<data_dir>/client/state.db`.
 */
import { join } from "node:path";
import type { OpenedSqlite } from "../../runtime/sqlite.ts";
import { openStateDb } from "../open.ts";
import { migrations } from "./migrations/index.ts";
import * as schema from "./schema.ts";

export type ClientSchema = typeof schema;
export type ClientState = OpenedSqlite<ClientSchema>;

export function clientStatePath(dataDir: string): string {
  return join(dataDir, "client", "state.db");
}

export function openClientState(dataDir: string): ClientState {
  return openStateDb(clientStatePath(dataDir), schema, migrations);
}
