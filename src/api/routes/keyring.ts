/**
 * Nomad's keyring operator endpoints (command/agent/keyring_endpoint.go),
 * management tokens only, as Nomad's:
 *
 *   GET         /v1/operator/keyring/keys        every kept key's metadata (RootKeyMeta)
 *   PUT|POST    /v1/operator/keyring/rotate      a new active key, ?full re-encrypts every variable: {Key, Index}
 *   DELETE      /v1/operator/keyring/key/:id     forgets an inactive key not in use (?force=true: in use too): {Index}
 *
 * Each answers X-Nomad-Index, the keyring's own index.
 */
import type { Context, Hono } from "hono";
import type { KeyringEndpoint } from "../../server/variables/keyring-endpoint.ts";
import { WRITE } from "../acl/route-rules.ts";
import * as v from "valibot";
import { GoBool } from "../../structs/common.ts";
import { ApiError } from "../errors.ts";
import { serverCall } from "./server-query.ts";

export function keyringRoutes(keyring: KeyringEndpoint) {
  return (app: Hono) => {
    const indexed = <T>(c: Context, answer: T) => {
      c.header("X-Nomad-Index", String(keyring.index));
      return c.json(answer);
    };
    app.get("/v1/operator/keyring/keys", (c) => indexed(c, keyring.list()));
    // Nomad reads ?full by its presence, whatever its value.
    app.on(WRITE, "/v1/operator/keyring/rotate", (c) => indexed(c, serverCall(() => keyring.rotate(c.req.query("full") !== undefined))));
    app.delete("/v1/operator/keyring/key/:id", (c) => {
      // Nomad 1.9 parses ?force as a Go bool and answers 422 for anything else.
      const force = v.safeParse(v.optional(GoBool, "false"), c.req.query("force"));
      if (!force.success) throw new ApiError(422, "invalid force parameter");
      return indexed(c, serverCall(() => keyring.remove(c.req.param("id"), force.output)));
    });
  };
}
