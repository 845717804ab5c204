/**
 * Workload identities (Nomad 1.x): a JWT per task, signed by the server's
 * keyring (EdDSA, `kid` the root key's ID), that the task presents as its
 * token. Its claims are Nomad's:
 *
 *   nomad_namespace, nomad_job_id (a child job's parent), nomad_allocation_id,
 *   nomad_task, sub (<region>:<namespace>:<job>:<group>:<task>:default),
 *   aud ("nomadproject.io", Nomad's WorkloadIdentityDefaultAud), jti, iat, nbf, and iss with server.oidc_issuer
 *
 * A named identity (Nomad 1.7's `identity { name = "x" aud = [...] ttl }`)
 * is signed the same way with its own audience, `sub` ending in its name,
 * and, with a ttl, an `exp`. The default identity carries no expiry: it is
 * good while its allocation is not terminal, which resolve() checks on
 * every request, as it checks `exp`. Every identity is a token to the API
 * (Nomad 1.7 does not judge the audience), holding its job's claim.
 *
 *   resolve(secret) ──> JWT-shaped? ──no──> the ACL tokens' resolver
 *        │ yes
 *        ▼
 *   signature by a kept key, claims well-formed, alloc known and running
 *        │ no ──> "ACL token not found" (Nomad's answer to a bad token)
 *        ▼
 *   a caller with no policy rights but its claim: its own job's variables
 */
import { randomUUID } from "node:crypto";
import * as v from "valibot";
import { Acl } from "../../acl/acl.ts";
import { TOKEN_NOT_FOUND, type Caller, type Resolution, type TokenResolver } from "../../acl/resolver.ts";
import { isAllocTerminal } from "../../structs/alloc.ts";
import type { Allocation } from "../../structs/alloc.ts";
import { DEFAULT_IDENTITY, type IdentitySpec } from "../../structs/job.ts";
import type { Keyring, SigningJwk } from "../variables/keyring.ts";
import type { StateStore } from "../state/store.ts";
import type { SigningKeyUse } from "./signing-keys.ts";

/** Nomad's audience of the default workload identity. */
export const DEFAULT_AUDIENCE = "nomadproject.io";
const NS_PER_S = 1_000_000_000;

const IdentityClaimsSchema = v.object({
  nomad_namespace: v.string(),
  nomad_job_id: v.string(),
  nomad_allocation_id: v.string(),
  nomad_task: v.string(),
  sub: v.string(),
  iss: v.optional(v.string()),
  /** One audience as a string, several as a list, none absent (as Nomad's JWT library writes it). */
  aud: v.optional(v.union([v.string(), v.array(v.string())])),
  jti: v.string(),
  iat: v.number(),
  nbf: v.number(),
  /** Seconds since the epoch; only an identity with a ttl has it. */
  exp: v.optional(v.number()),
});
export type IdentityClaims = v.InferOutput<typeof IdentityClaimsSchema>;

const HeaderSchema = v.object({ alg: v.literal("EdDSA"), kid: v.string(), typ: v.optional(v.string()) });

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

const base64url = (text: string | Buffer) => Buffer.from(text).toString("base64url");

function decodeJson(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

/** Where the key set is served, below the issuer. */
export const JWKS_PATH = "/.well-known/jwks.json";

export interface OidcDiscovery {
  issuer: string;
  jwks_uri: string;
  id_token_signing_alg_values_supported: string[];
  response_types_supported: string[];
  subject_types_supported: string[];
}

/** A caller that holds no policy at all: what a workload identity adds is its claim. */
const NO_POLICIES = new Acl(false, []);

export class WorkloadIdentities implements TokenResolver {
  constructor(
    private readonly keyring: Keyring,
    private readonly store: StateStore,
    private readonly issuing: { region: string; issuer?: string },
    /** Who resolves every token that is not a workload identity. */
    private readonly tokens: TokenResolver,
    /** Where the keys that signed live allocations' tokens are kept (a key in use is not removed). */
    private readonly signers?: SigningKeyUse,
  ) {}

  /** Whether allocation `allocId` is known and not terminal: its tokens are good. */
  readonly isLive = (allocId: string): boolean => {
    const alloc = this.store.read.allocs.get(allocId);
    return alloc !== undefined && !isAllocTerminal(alloc);
  };

  /** The live allocations whose tokens key `keyId` signed. */
  holdersOf(keyId: string): string[] {
    return this.signers?.holders(keyId, this.isLive) ?? [];
  }

  /** The signed identity `spec` (the default one without) of `task` in `alloc`. */
  sign(alloc: Allocation, task: string, spec?: IdentitySpec): string {
    const now = Math.floor(Date.now() / 1000);
    const job = alloc.Job.ParentID || alloc.JobID;
    const name = spec && spec.Name !== "" ? spec.Name : DEFAULT_IDENTITY;
    const audience = name === DEFAULT_IDENTITY ? [DEFAULT_AUDIENCE] : (spec?.Audience ?? []);
    const ttlSeconds = name === DEFAULT_IDENTITY ? 0 : Math.ceil((spec?.TTL ?? 0) / NS_PER_S);
    const claims: IdentityClaims = {
      nomad_namespace: alloc.Namespace,
      nomad_job_id: job,
      nomad_allocation_id: alloc.ID,
      nomad_task: task,
      sub: [this.issuing.region, alloc.Namespace, job, alloc.TaskGroup, task, name].join(":"),
      ...(this.issuing.issuer ? { iss: this.issuing.issuer } : {}),
      ...(audience.length === 0 ? {} : { aud: audience.length === 1 ? audience[0]! : audience }),
      jti: randomUUID(),
      iat: now,
      nbf: now,
      ...(ttlSeconds > 0 ? { exp: now + ttlSeconds } : {}),
    };
    const header = { alg: "EdDSA", kid: this.keyring.activeKeyId, typ: "JWT" };
    const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
    const { keyId, signature } = this.keyring.sign(unsigned);
    this.signers?.record(alloc.ID, keyId, this.isLive);
    return `${unsigned}.${base64url(signature)}`;
  }

  /** The signed identity `spec` of `task` in the allocation `allocId`, or undefined when the server has no such allocation. */
  signFor(allocId: string, task: string, spec?: IdentitySpec): string | undefined {
    const alloc = this.store.read.allocs.get(allocId);
    return alloc && this.sign(alloc, task, spec);
  }

  /**
   * The caller a task's own reads go through (its templates'): its claim
   * alone with ACLs on, as if it had presented its token; anyone without.
   */
  callerOf(alloc: Allocation, task: string, aclEnabled: boolean): Caller {
    if (!aclEnabled) return { acl: Acl.management };
    return { acl: NO_POLICIES, claim: { namespace: alloc.Namespace, job: alloc.Job.ParentID || alloc.JobID, group: alloc.TaskGroup, task } };
  }

  /** The claims of a token this keyring signed, or undefined for anything else. */
  verify(token: string): IdentityClaims | undefined {
    if (!JWT_SHAPE.test(token)) return undefined;
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const parsedHeader = v.safeParse(HeaderSchema, decodeJson(header));
    if (!parsedHeader.success) return undefined;
    if (!this.keyring.verify(parsedHeader.output.kid, `${header}.${payload}`, Buffer.from(signature, "base64url"))) return undefined;
    const claims = v.safeParse(IdentityClaimsSchema, decodeJson(payload));
    return claims.success ? claims.output : undefined;
  }

  /**
   * The OIDC discovery document (Nomad 1.7's), or undefined without an
   * issuer: Nomad then answers 404 "OIDC Discovery endpoint disabled".
   */
  discovery(): OidcDiscovery | undefined {
    const { issuer } = this.issuing;
    if (!issuer) return undefined;
    return {
      issuer,
      jwks_uri: `${issuer.replace(/\/+$/, "")}${JWKS_PATH}`,
      id_token_signing_alg_values_supported: ["EdDSA"],
      response_types_supported: ["code"],
      subject_types_supported: ["public"],
    };
  }

  /** The public keys a token verifies with (/.well-known/jwks.json). */
  jwks(): { keys: SigningJwk[] } {
    return { keys: this.keyring.publicJwks() };
  }

  resolve(secret: string | undefined): Resolution | Promise<Resolution> {
    if (!secret || !JWT_SHAPE.test(secret)) return this.tokens.resolve(secret);
    const claims = this.verify(secret);
    if (!claims) return { refused: TOKEN_NOT_FOUND };
    if (claims.exp !== undefined && claims.exp <= Date.now() / 1000) return { refused: TOKEN_NOT_FOUND };
    const alloc = this.store.read.allocs.get(claims.nomad_allocation_id);
    // Nomad refuses the identity of an allocation that is gone or done.
    if (!alloc || !this.isLive(alloc.ID)) return { refused: TOKEN_NOT_FOUND };
    return {
      caller: {
        acl: NO_POLICIES,
        claim: { namespace: claims.nomad_namespace, job: claims.nomad_job_id, group: alloc.TaskGroup, task: claims.nomad_task },
      },
    };
  }
}
