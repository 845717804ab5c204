/**
 * The embedded server's ACL endpoint (Nomad's nomad/acl_endpoint.go): the
 * one-time bootstrap, policies and tokens, and the resolution of a request's
 * secret to its caller.
 *
 *   bootstrap ──> a management token, once; again only with the reset index
 *                 written to <data_dir>/server/acl-bootstrap-reset (Nomad's way
 *                 back in after the bootstrap token is lost)
 *   policies  ──> rules parsed and stored with their RulesJSON; a change drops
 *                 every compiled ACL
 *   tokens    ──> made here with a random secret; only its hash is stored
 *   resolve   ──> secret hash -> token -> its policies compiled (cached per
 *                 set of policy names) -> Caller
 *
 * Who may call each endpoint is decided at the HTTP boundary (src/api/acl/);
 * the few reads open to any caller narrow what they show here: a client
 * token sees its own token and its own policies.
 */
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Acl } from "../../acl/acl.ts";
import { parsePolicyRules, type PolicyRules } from "../../acl/policy.ts";
import { PERMISSION_DENIED, TOKEN_EXPIRED, TOKEN_NOT_FOUND, type Caller, type Resolution, type TokenResolver } from "../../acl/resolver.ts";
import { ANONYMOUS_POLICY, type AclPolicy, type AclPolicyStub, type AclToken, type AclTokenStub, type PolicyUpsert, type TokenUpsert } from "../../acl/structs.ts";
import { ValidationError } from "../../lib/validation.ts";
import type { ServerStateDb } from "../../state/server/db.ts";
import { ServerError, invalid } from "../errors.ts";
import { AclState, secretHash, type StoredToken } from "./state.ts";

/** Nomad's file for re-bootstrapping: it holds the reset index the last bootstrap answered with. */
export const BOOTSTRAP_RESET_FILE = "acl-bootstrap-reset";

export interface TokenLifetimes {
  /** The shortest and longest expiry a token may ask for (Nomad's token_min/max_expiration_ttl), ms. */
  minTtlMs: number;
  maxTtlMs: number;
}

const denied = () => new ServerError("denied", PERMISSION_DENIED);
const b64sha256 = (...parts: string[]) => createHash("sha256").update(parts.join("\0")).digest("base64");

export class AclEndpoint implements TokenResolver {
  private readonly state: AclState;
  /** Compiled ACLs by their token's sorted policy names ("\n"-joined); dropped on any change. */
  private readonly compiled = new Map<string, Acl>();

  constructor(
    db: ServerStateDb,
    /** `<data_dir>/server`, where the bootstrap reset file is looked for. */
    private readonly serverDir: string,
    private readonly lifetimes: TokenLifetimes,
  ) {
    this.state = new AclState(db);
    this.state.onChange = () => this.compiled.clear();
  }

  get index(): number {
    return Math.max(1, this.state.index);
  }

  // --- resolution -----------------------------------------------------------

  resolve(secret: string | undefined): Resolution {
    if (!secret) return { caller: { acl: this.aclOf([ANONYMOUS_POLICY]) } };
    const token = this.state.tokenBySecretHash(secretHash(secret));
    if (!token) return { refused: TOKEN_NOT_FOUND };
    if (token.ExpirationTime !== null && Date.parse(token.ExpirationTime) <= Date.now()) return { refused: TOKEN_EXPIRED };
    return { caller: { acl: token.Type === "management" ? Acl.management : this.aclOf(token.Policies ?? []), token } };
  }

  private aclOf(names: readonly string[]): Acl {
    const key = [...names].sort().join("\n");
    let acl = this.compiled.get(key);
    if (!acl) {
      const rules: PolicyRules[] = [];
      for (const name of names) {
        const policy = this.state.policy(name);
        if (policy) rules.push(policy.RulesJSON);
      }
      acl = new Acl(false, rules);
      this.compiled.set(key, acl);
    }
    return acl;
  }

  // --- bootstrap ------------------------------------------------------------

  /** The first management token. Refused once done, unless the reset file names the current reset index. */
  bootstrap(): AclToken {
    const done = this.state.bootstrapIndex;
    if (done > 0) {
      const specified = this.resetIndexFromFile();
      if (specified === undefined) throw invalid(`ACL bootstrap already done (reset index: ${done})`);
      if (specified !== done) throw invalid(`Invalid bootstrap reset index (specified ${specified}, reset index: ${done})`);
    }
    const secret = randomUUID();
    const token = this.state.write((index) => {
      const stored = this.newToken(index, { Name: "Bootstrap Token", Type: "management", Policies: null, Global: true, ExpirationTime: null }, secret);
      return { result: stored.token, tokens: [stored], bootstrap: true };
    });
    return { ...token, SecretID: secret };
  }

  private resetIndexFromFile(): number | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.serverDir, BOOTSTRAP_RESET_FILE), "utf8");
    } catch {
      return undefined;
    }
    const index = Number(text.trim());
    return Number.isInteger(index) && index > 0 ? index : undefined;
  }

  // --- policies -------------------------------------------------------------

  listPolicies(caller: Caller, prefix = ""): AclPolicyStub[] {
    const visible = this.visiblePolicies(caller);
    return this.state
      .allPolicies()
      .filter((policy) => policy.Name.startsWith(prefix) && (visible === "all" || visible.has(policy.Name)))
      .map(({ Rules: _rules, RulesJSON: _json, ...stub }) => stub);
  }

  /** A policy: management sees any; any caller sees the anonymous policy and its own token's policies. */
  getPolicy(caller: Caller, name: string): AclPolicy {
    const visible = this.visiblePolicies(caller);
    if (visible !== "all" && name !== ANONYMOUS_POLICY && !visible.has(name)) throw denied();
    const policy = this.state.policy(name);
    if (!policy) throw new ServerError("not-found", "ACL policy not found");
    return policy;
  }

  private visiblePolicies(caller: Caller): "all" | Set<string> {
    if (caller.acl.isManagement) return "all";
    return new Set(caller.token ? (caller.token.Policies ?? []) : [ANONYMOUS_POLICY]);
  }

  async upsertPolicy(request: PolicyUpsert): Promise<void> {
    let rules: PolicyRules;
    try {
      rules = await parsePolicyRules(`policy "${request.Name}"`, request.Rules);
    } catch (err) {
      if (err instanceof ValidationError) throw invalid(err.lines().join("\n"));
      throw err;
    }
    this.state.write((index) => {
      const existing = this.state.policy(request.Name);
      const policy: AclPolicy = {
        Name: request.Name,
        Description: request.Description,
        Rules: request.Rules,
        RulesJSON: rules,
        Hash: b64sha256(request.Name, request.Description, request.Rules),
        CreateIndex: existing?.CreateIndex ?? index,
        ModifyIndex: index,
      };
      return { result: undefined, policies: [policy] };
    });
  }

  deletePolicy(name: string): void {
    if (!this.state.policy(name)) throw new ServerError("not-found", "ACL policy not found");
    this.state.write(() => ({ result: undefined, deletePolicies: [name] }));
  }

  // --- tokens ---------------------------------------------------------------

  listTokens(prefix = ""): AclTokenStub[] {
    return this.state.allTokens().filter((token) => token.AccessorID.startsWith(prefix));
  }

  /** A token without its secret: management reads any, a token itself. */
  getToken(caller: Caller, accessor: string): AclToken {
    if (!caller.acl.isManagement && caller.token?.AccessorID !== accessor) throw denied();
    const token = this.state.token(accessor);
    if (!token) throw new ServerError("not-found", "ACL token not found");
    return { ...token, SecretID: "" };
  }

  /**
   * The caller's own token, with the secret it called with: only its hash
   * is stored, and Nomad's self answers the whole token (what `nomad acl
   * token self` prints, and API clients compare).
   */
  self(caller: Caller, secret: string): AclToken {
    if (!caller.token) throw new ServerError("denied", TOKEN_NOT_FOUND);
    return { ...caller.token, SecretID: secret };
  }

  /**
   * Creates a token (no AccessorID), answering with its secret, or updates
   * one: name, type and policies may change; Global and the expiry may not.
   */
  upsertToken(request: TokenUpsert): AclToken {
    if (request.AccessorID) return { ...this.updateToken(request), SecretID: "" };
    checkTokenShape(request);
    const expiration = this.expirationOf(request);
    const secret = randomUUID();
    const token = this.state.write((index) => {
      const stored = this.newToken(index, { Name: request.Name, Type: request.Type, Policies: policiesOf(request), Global: request.Global, ExpirationTime: expiration }, secret);
      return { result: stored.token, tokens: [stored] };
    });
    return { ...token, SecretID: secret };
  }

  private updateToken(request: TokenUpsert): AclTokenStub {
    const existing = this.state.storedToken(request.AccessorID);
    if (!existing) throw new ServerError("not-found", `cannot find token ${request.AccessorID}`);
    checkTokenShape(request);
    if (request.Global !== existing.token.Global) throw invalid(`cannot toggle global mode of ${request.AccessorID}`);
    // An update may repeat the token's expiry (Nomad's CLI sends the whole token back), not change it.
    const asked = request.ExpirationTime ? Date.parse(request.ExpirationTime) : null;
    const held = existing.token.ExpirationTime ? Date.parse(existing.token.ExpirationTime) : null;
    if (request.ExpirationTTL > 0 || (asked !== null && asked !== held)) throw invalid("cannot change the expiration of an existing token");
    return this.state.write((index) => {
      const token: AclTokenStub = {
        ...existing.token,
        Name: request.Name,
        Type: request.Type,
        Policies: policiesOf(request),
        Hash: tokenHash(request.Name, request.Type, policiesOf(request), existing.token.Global),
        ModifyIndex: index,
      };
      return { result: token, tokens: [{ token, secretHash: existing.secretHash }] };
    });
  }

  deleteToken(accessor: string): void {
    if (!this.state.token(accessor)) throw invalid(`Cannot delete nonexistent tokens: ${accessor}`);
    this.state.write(() => ({ result: undefined, deleteTokens: [accessor] }));
  }

  private newToken(index: number, fields: Pick<AclTokenStub, "Name" | "Type" | "Policies" | "Global" | "ExpirationTime">, secret: string): StoredToken {
    const token: AclTokenStub = {
      AccessorID: randomUUID(),
      ...fields,
      Hash: tokenHash(fields.Name, fields.Type, fields.Policies, fields.Global),
      CreateTime: new Date().toISOString(),
      CreateIndex: index,
      ModifyIndex: index,
    };
    return { token, secretHash: secretHash(secret) };
  }

  /** An asked-for expiry as a time, within the configured bounds. */
  private expirationOf(request: TokenUpsert): string | null {
    const ttlMs = request.ExpirationTTL / 1e6;
    if (request.ExpirationTime && ttlMs > 0) throw invalid("token 0 invalid: ExpirationTime and ExpirationTTL cannot both be set");
    const at = request.ExpirationTime ? Date.parse(request.ExpirationTime) : ttlMs > 0 ? Date.now() + ttlMs : null;
    if (at === null) return null;
    const { minTtlMs, maxTtlMs } = this.lifetimes;
    const inMs = at - Date.now();
    if (inMs < minTtlMs) throw invalid(`token 0 invalid: expiration time cannot be less than ${minTtlMs / 1000}s in the future`);
    if (inMs > maxTtlMs) throw invalid(`token 0 invalid: expiration time cannot be more than ${maxTtlMs / 1000}s in the future`);
    return new Date(at).toISOString();
  }
}

/** Nomad's token rules: a client token names policies, a management token none. */
function checkTokenShape(request: TokenUpsert): void {
  const policies = policiesOf(request) ?? [];
  if (request.Type === "client" && policies.length === 0) throw invalid("token 0 invalid: client token missing policies");
  if (request.Type === "management" && policies.length > 0) throw invalid("token 0 invalid: management token cannot be associated with policies");
}

const policiesOf = (request: TokenUpsert): string[] | null => (request.Policies && request.Policies.length > 0 ? [...new Set(request.Policies)] : null);

function tokenHash(name: string, type: string, policies: readonly string[] | null, global: boolean): string {
  return b64sha256(name, type, ...(policies ?? []), String(global));
}
