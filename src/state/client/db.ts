/**
 * The client state database: `state.db` in the client's state dir
 * (client.state_dir, default `<data_dir>/client`).
 */
import { join } from "node:path";
import type { OpenedSqlite } from "../../runtime/sqlite.ts";
import { openStateDb } from "../open.ts";
import { migrations } from "./migrations/index.ts";
import * as schema from "./schema.ts";

export type ClientSchema = typeof schema;
export type ClientState = OpenedSqlite<ClientSchema>;

export function clientStatePath(clientDir: string): string {
  return join(clientDir, "state.db");
}

export function openClientState(clientDir: string): ClientState {
  return openStateDb(clientStatePath(clientDir), schema, migrations);
}
