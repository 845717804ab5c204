/**
 * What verifies a task's workload identity (Nomad 1.7's well-known paths):
 *
 *   GET /.well-known/jwks.json   the keyring's public signing keys (JWKS, EdDSA, `kid` per key)
 *
 * Public, as Nomad's: anyone may verify a token; the keys sign, never decrypt.
 */
import type { Hono } from "hono";
import type { WorkloadIdentities } from "../../server/identity/workload-identity.ts";

export function identityRoutes(identities: WorkloadIdentities) {
  return (app: Hono) => {
    app.get("/.well-known/jwks.json", (c) => {
      // Keys change only when the keystore gets a new one; a verifier may keep them a while (Nomad derives its max-age from its rotation threshold).
      c.header("Cache-Control", `max-age=${JWKS_MAX_AGE_S}`);
      return c.json(identities.jwks());
    });
  };
}

/** How long a verifier may keep the key set: drover never rotates on its own. */
const JWKS_MAX_AGE_S = 3600;
