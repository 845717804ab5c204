/**
 * What verifies a task's workload identity (Nomad 1.7's well-known paths):
 *
 *   GET /.well-known/jwks.json             the keyring's public signing keys (JWKS, EdDSA, `kid` per key)
 *   GET /.well-known/openid-configuration  OIDC discovery, with server.oidc_issuer; else Nomad's 404
 *
 * Public, as Nomad's: anyone may verify a token; the keys sign, never decrypt.
 */
import type { Hono } from "hono";
import { JWKS_PATH, type WorkloadIdentities } from "../../server/identity/workload-identity.ts";
import { ApiError } from "../errors.ts";

export function identityRoutes(identities: WorkloadIdentities) {
  return (app: Hono) => {
    app.get(JWKS_PATH, (c) => {
      // Keys change only on a rotation (by hand, /v1/operator/keyring/rotate); a verifier may keep them a while and learns a new key within this.
      c.header("Cache-Control", `max-age=${JWKS_MAX_AGE_S}`);
      return c.json(identities.jwks());
    });
    app.get("/.well-known/openid-configuration", (c) => {
      const discovery = identities.discovery();
      if (!discovery) throw new ApiError(404, "OIDC Discovery endpoint disabled");
      return c.json(discovery);
    });
  };
}

/** How long a verifier may keep the key set: Nomad's floor (jwksMinMaxAge), as drover never rotates on its own. */
const JWKS_MAX_AGE_S = 15 * 60;
