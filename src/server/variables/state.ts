/**
 * The variables table of the server's state database, in memory for reads
 * (metadata and sealed items, never the plaintext) and written through one
 * SQLite transaction per change.
 *
 * Variables have an index of their own (`variables_index` in server_meta),
 * as ACLs do: a variable's write never wakes the job and alloc tables'
 * blocking queries, and theirs never wake a template waiting on a variable.
 */
import { and, eq } from "drizzle-orm";
import * as v from "valibot";
import { isDiskFull } from "../../state/reserve.ts";
import { parseStoredJson } from "../../state/rows.ts";
import type { ServerStateDb } from "../../state/server/db.ts";
import { serverMeta, variables } from "../../state/server/schema.ts";
import type { VariableMetadata } from "../../structs/variable.ts";
import { ServerError } from "../errors.ts";
import { IndexWatch } from "../state/watch.ts";
import type { Sealed } from "./keyring.ts";

const INDEX_KEY = "variables_index";

const StoredMetadataSchema = v.object({
  Namespace: v.string(),
  Path: v.string(),
  CreateIndex: v.number(),
  CreateTime: v.number(),
  ModifyIndex: v.number(),
  ModifyTime: v.number(),
});

export interface StoredVariable {
  meta: VariableMetadata;
  sealed: Sealed;
}

const keyOf = (namespace: string, path: string) => `${namespace}\0${path}`;

/** Nomad's order of its variables table: by namespace, then path. */
const byNamespaceAndPath = (a: StoredVariable, b: StoredVariable) =>
  a.meta.Namespace === b.meta.Namespace ? (a.meta.Path < b.meta.Path ? -1 : 1) : a.meta.Namespace < b.meta.Namespace ? -1 : 1;

export class VariablesState {
  private readonly rows = new Map<string, StoredVariable>();
  private lastIndex: number;
  /** Blocking reads wait here for the next write. */
  readonly watch = new IndexWatch();

  constructor(private readonly state: ServerStateDb) {
    const { db } = state;
    this.lastIndex = Number(db.select().from(serverMeta).where(eq(serverMeta.key, INDEX_KEY)).get()?.value ?? 0);
    for (const row of db.select().from(variables).all()) {
      const meta = parseStoredJson("server", StoredMetadataSchema, row.body, `variable ${row.namespace}/${row.path}`);
      this.rows.set(keyOf(row.namespace, row.path), { meta, sealed: { keyId: row.keyId, data: row.data } });
    }
  }

  /** The index of the last write, at least 1 (Nomad never answers index 0). */
  get index(): number {
    return Math.max(1, this.lastIndex);
  }

  get(namespace: string, path: string): StoredVariable | undefined {
    return this.rows.get(keyOf(namespace, path));
  }

  /** Every variable in `namespace` (every one for undefined), by namespace and path. */
  all(namespace: string | undefined): StoredVariable[] {
    return [...this.rows.values()].filter((row) => namespace === undefined || row.meta.Namespace === namespace).sort(byNamespaceAndPath);
  }

  /** One change at the next index: `fn` gets the index and says what to put or remove. */
  write<T>(fn: (index: number) => { result: T; put?: StoredVariable; remove?: { namespace: string; path: string } }): T {
    const index = this.lastIndex + 1;
    const change = fn(index);
    const { db, raw } = this.state;
    try {
      raw.transaction(() => {
        if (change.put) {
          const { meta, sealed } = change.put;
          const row = { namespace: meta.Namespace, path: meta.Path, keyId: sealed.keyId, data: sealed.data, body: JSON.stringify(meta) };
          db.insert(variables).values(row).onConflictDoUpdate({ target: [variables.namespace, variables.path], set: row }).run();
        }
        if (change.remove) {
          const { namespace, path } = change.remove;
          db.delete(variables).where(and(eq(variables.namespace, namespace), eq(variables.path, path))).run();
        }
        const meta = { key: INDEX_KEY, value: String(index) };
        db.insert(serverMeta).values(meta).onConflictDoUpdate({ target: serverMeta.key, set: meta }).run();
      });
    } catch (err) {
      if (isDiskFull(err)) throw new ServerError("storage-full", "the disk holding the server state is full; nothing was changed (free some space and retry)");
      throw err;
    }
    if (change.put) this.rows.set(keyOf(change.put.meta.Namespace, change.put.meta.Path), change.put);
    if (change.remove) this.rows.delete(keyOf(change.remove.namespace, change.remove.path));
    this.lastIndex = index;
    this.watch.notify();
    return change.result;
  }

  /**
   * Seals every variable anew (a full key rotation), in one transaction. Not
   * a change of any variable: no index moves, no blocking read wakes.
   */
  reseal(seal: (row: StoredVariable) => Sealed): number {
    const resealed = [...this.rows.values()].map((row) => ({ ...row, sealed: seal(row) }));
    const { db, raw } = this.state;
    try {
      raw.transaction(() => {
        for (const { meta, sealed } of resealed) {
          db.update(variables).set({ keyId: sealed.keyId, data: sealed.data }).where(and(eq(variables.namespace, meta.Namespace), eq(variables.path, meta.Path))).run();
        }
      });
    } catch (err) {
      if (isDiskFull(err)) throw new ServerError("storage-full", "the disk holding the server state is full; nothing was re-encrypted (free some space and retry)");
      throw err;
    }
    for (const row of resealed) this.rows.set(keyOf(row.meta.Namespace, row.meta.Path), row);
    return resealed.length;
  }

  close(): void {
    this.watch.close();
  }
}
