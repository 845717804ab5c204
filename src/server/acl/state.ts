/**
 * The ACL tables of the server's state database, in memory for reads and
 * written through one SQLite transaction per change. Tokens are kept by
 * accessor and by the SHA-256 of their secret; the secret itself is never
 * stored, so it exists only in the response that created the token.
 *
 * ACL writes have an index of their own (`acl_index` in server_meta): they
 * never wait for, or wake, the job and alloc tables' blocking queries.
 */
import { createHash } from "node:crypto";
import { eq } from "drizzle-orm";
import * as v from "valibot";
import { PolicyRulesSchema } from "../../acl/policy.ts";
import { TOKEN_TYPES, type AclPolicy, type AclTokenStub } from "../../acl/structs.ts";
import { isDiskFull } from "../../state/reserve.ts";
import { parseStoredJson } from "../../state/rows.ts";
import type { ServerStateDb } from "../../state/server/db.ts";
import { aclPolicies, aclTokens, serverMeta } from "../../state/server/schema.ts";
import { ServerError } from "../errors.ts";

const INDEX_KEY = "acl_index";
const BOOTSTRAP_KEY = "acl_bootstrap_index";

const StoredPolicySchema = v.object({
  Name: v.string(),
  Description: v.string(),
  Rules: v.string(),
  RulesJSON: PolicyRulesSchema,
  Hash: v.string(),
  CreateIndex: v.number(),
  ModifyIndex: v.number(),
});

const StoredTokenSchema = v.object({
  AccessorID: v.string(),
  Name: v.string(),
  Type: v.picklist(TOKEN_TYPES),
  Policies: v.nullable(v.array(v.string())),
  Global: v.boolean(),
  Hash: v.string(),
  CreateTime: v.string(),
  ExpirationTime: v.nullable(v.string()),
  CreateIndex: v.number(),
  ModifyIndex: v.number(),
});

/** The SHA-256 of a token secret, hex: the only form a secret is kept in. */
export function secretHash(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

export interface StoredToken {
  token: AclTokenStub;
  secretHash: string;
}

export class AclState {
  private readonly tokens = new Map<string, StoredToken>();
  private readonly bySecret = new Map<string, StoredToken>();
  private readonly policies = new Map<string, AclPolicy>();
  private lastIndex: number;
  private bootstrapped: number;
  /** Called after every committed change (the resolver drops what it compiled). */
  onChange: () => void = () => {};

  constructor(private readonly state: ServerStateDb) {
    const { db } = state;
    const meta = (key: string) => Number(db.select().from(serverMeta).where(eq(serverMeta.key, key)).get()?.value ?? 0);
    this.lastIndex = meta(INDEX_KEY);
    this.bootstrapped = meta(BOOTSTRAP_KEY);
    for (const row of db.select().from(aclPolicies).all()) {
      this.policies.set(row.name, parseStoredJson("server", StoredPolicySchema, row.body, `ACL policy ${row.name}`));
    }
    for (const row of db.select().from(aclTokens).all()) {
      const stored = { token: parseStoredJson("server", StoredTokenSchema, row.body, `ACL token ${row.accessorId}`), secretHash: row.secretHash };
      this.tokens.set(row.accessorId, stored);
      this.bySecret.set(row.secretHash, stored);
    }
  }

  get index(): number {
    return this.lastIndex;
  }

  /** The index of the bootstrap, or 0 when ACLs were never bootstrapped. */
  get bootstrapIndex(): number {
    return this.bootstrapped;
  }

  tokenBySecretHash(hash: string): AclTokenStub | undefined {
    return this.bySecret.get(hash)?.token;
  }

  token(accessor: string): AclTokenStub | undefined {
    return this.tokens.get(accessor)?.token;
  }

  allTokens(): AclTokenStub[] {
    return [...this.tokens.values()].map((stored) => stored.token).sort((a, b) => (a.AccessorID < b.AccessorID ? -1 : 1));
  }

  policy(name: string): AclPolicy | undefined {
    return this.policies.get(name);
  }

  allPolicies(): AclPolicy[] {
    return [...this.policies.values()].sort((a, b) => (a.Name < b.Name ? -1 : 1));
  }

  /**
   * One change at the next index: `fn` gets the index and says what to write.
   * Memory changes only once SQLite has the change.
   */
  write<T>(fn: (index: number) => { result: T; tokens?: StoredToken[]; deleteTokens?: string[]; policies?: AclPolicy[]; deletePolicies?: string[]; bootstrap?: boolean }): T {
    const index = this.lastIndex + 1;
    const change = fn(index);
    const { db, raw } = this.state;
    try {
      raw.transaction(() => {
        for (const { token, secretHash: hash } of change.tokens ?? []) {
          const row = { accessorId: token.AccessorID, secretHash: hash, body: JSON.stringify(token) };
          db.insert(aclTokens).values(row).onConflictDoUpdate({ target: aclTokens.accessorId, set: row }).run();
        }
        for (const accessor of change.deleteTokens ?? []) db.delete(aclTokens).where(eq(aclTokens.accessorId, accessor)).run();
        for (const policy of change.policies ?? []) {
          const row = { name: policy.Name, body: JSON.stringify(policy) };
          db.insert(aclPolicies).values(row).onConflictDoUpdate({ target: aclPolicies.name, set: row }).run();
        }
        for (const name of change.deletePolicies ?? []) db.delete(aclPolicies).where(eq(aclPolicies.name, name)).run();
        const metas = [{ key: INDEX_KEY, value: String(index) }, ...(change.bootstrap ? [{ key: BOOTSTRAP_KEY, value: String(index) }] : [])];
        for (const meta of metas) db.insert(serverMeta).values(meta).onConflictDoUpdate({ target: serverMeta.key, set: meta }).run();
      });
    } catch (err) {
      if (isDiskFull(err)) throw new ServerError("storage-full", "the disk holding the server state is full; nothing was changed (free some space and retry)");
      throw err;
    }
    for (const stored of change.tokens ?? []) {
      const previous = this.tokens.get(stored.token.AccessorID);
      if (previous) this.bySecret.delete(previous.secretHash);
      this.tokens.set(stored.token.AccessorID, stored);
      this.bySecret.set(stored.secretHash, stored);
    }
    for (const accessor of change.deleteTokens ?? []) {
      const previous = this.tokens.get(accessor);
      if (previous) this.bySecret.delete(previous.secretHash);
      this.tokens.delete(accessor);
    }
    for (const policy of change.policies ?? []) this.policies.set(policy.Name, policy);
    for (const name of change.deletePolicies ?? []) this.policies.delete(name);
    this.lastIndex = index;
    if (change.bootstrap) this.bootstrapped = index;
    this.onChange();
    return change.result;
  }

  storedToken(accessor: string): StoredToken | undefined {
    return this.tokens.get(accessor);
  }
}
