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

/**
 * `make` run once per database and its result kept with it: statements prepared once,
 * for writes made for every task (a state write that builds its query and has SQLite
 * parse it each time costs several times the write itself).
 */
export function perDatabase<T>(make: (state: ClientState) => T): (state: ClientState) => T {
  const made = new WeakMap<ClientState, T>();
  return (state) => {
    let value = made.get(state);
    if (value === undefined) made.set(state, (value = make(state)));
    return value;
  };
}
