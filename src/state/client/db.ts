/**
 * The client state database: `state.db` in the client's state dir
 * (client.state_dir, default `<data_dir>/client`).
 */
import { join } from "node:path";
import type { OpenedSqlite } from "../../runtime/sqlite.ts";
import { openStateDb } from "../open.ts";
import { writeWithReserve, type DiskReserve } from "../reserve.ts";
import { migrations } from "./migrations/index.ts";
import * as schema from "./schema.ts";

export type ClientSchema = typeof schema;
export interface ClientState extends OpenedSqlite<ClientSchema> {
  /** Runs a write; when the disk is full it spends the data dir's reserve and tries once more. */
  write<T>(fn: () => T): T;
}

export function clientStatePath(clientDir: string): string {
  return join(clientDir, "state.db");
}

export function openClientState(clientDir: string, reserve?: DiskReserve): ClientState {
  const opened = openStateDb(clientStatePath(clientDir), schema, migrations);
  return { ...opened, write: (fn) => writeWithReserve(reserve, fn) };
}

