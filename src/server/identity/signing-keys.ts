/**
 * Which root keys signed the workload identities of which allocations
 * (Nomad keeps an allocation's SigningKeyID for the same reason): a key
 * that signed a live allocation's tokens is still in use, since a running
 * task keeps the token it started with (its environment cannot change), so
 * removing that key would lock the task out.
 *
 * Kept in server_meta (one JSON row: allocation ID -> key IDs), written only
 * when an allocation's tokens are signed by a key not yet recorded for it,
 * and pruned of allocations the caller says are over.
 */
import { eq } from "drizzle-orm";
import * as v from "valibot";
import { parseStoredJson } from "../../state/rows.ts";
import type { ServerStateDb } from "../../state/server/db.ts";
import { serverMeta } from "../../state/server/schema.ts";

const META_KEY = "identity_signing_keys";
const StoredSchema = v.record(v.string(), v.array(v.string()));

export class SigningKeyUse {
  private readonly byAlloc = new Map<string, Set<string>>();

  constructor(private readonly state: ServerStateDb) {
    const row = state.db.select().from(serverMeta).where(eq(serverMeta.key, META_KEY)).get();
    if (row) {
      for (const [allocId, keys] of Object.entries(parseStoredJson("server", StoredSchema, row.value, "the identity signing keys"))) this.byAlloc.set(allocId, new Set(keys));
    }
  }

  /** `keyId` signed a token of `allocId`; `live` says which allocations still count (the others are forgotten). */
  record(allocId: string, keyId: string, live: (allocId: string) => boolean): void {
    if (this.byAlloc.get(allocId)?.has(keyId)) return;
    for (const id of this.byAlloc.keys()) if (id !== allocId && !live(id)) this.byAlloc.delete(id);
    this.byAlloc.set(allocId, new Set([...(this.byAlloc.get(allocId) ?? []), keyId]));
    const value = JSON.stringify(Object.fromEntries([...this.byAlloc].map(([id, keys]) => [id, [...keys]])));
    this.state.db.insert(serverMeta).values({ key: META_KEY, value }).onConflictDoUpdate({ target: serverMeta.key, set: { value } }).run();
  }

  /** The live allocations whose tokens `keyId` signed. */
  holders(keyId: string, live: (allocId: string) => boolean): string[] {
    return [...this.byAlloc].filter(([allocId, keys]) => keys.has(keyId) && live(allocId)).map(([allocId]) => allocId);
  }
}
