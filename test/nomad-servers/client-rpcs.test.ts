/**
 * The client RPCs a Nomad server forwards to this node are answered by the
 * agent's own API: a reply in Go's shape, and an error with the API's own
 * message, which the server hands to its caller.
 */
import { expect, test } from "bun:test";
import type { Hono } from "hono";
import pino from "pino";
import { PUBLIC } from "../../src/api/acl/route-rules.ts";
import { createApp } from "../../src/api/app.ts";
import { notFound } from "../../src/api/errors.ts";
import { clientRpcs } from "../../src/nomad-servers/client-rpcs.ts";

const app = createApp(
  pino({ level: "silent" }),
  [
    (hono: Hono) => {
      hono.get("/v1/client/stats", (c) => c.json({ Uptime: 7 }));
      hono.get("/v1/client/fs/ls/:id", (c) => {
        throw notFound(`alloc "${c.req.param("id")}"`);
      });
    },
  ],
  { routeRules: ["/v1/client/stats", "/v1/client/fs/ls/:id"].map((path) => ({ methods: ["GET"], path, rule: PUBLIC })) },
);
const handle = clientRpcs(async (request) => app.fetch(request));

test("a reply comes back in the RPC's shape", async () => {
  expect(await handle("ClientStats.Stats", {})).toEqual({ HostStats: { Uptime: 7 } });
});

test("an error carries the API's message, not only its status", async () => {
  await expect(handle("FileSystem.List", { AllocID: "abc", Path: "/" })).rejects.toThrow('alloc "abc" not found');
});

test("an unknown method is named", async () => {
  await expect(handle("Allocations.Nope", {})).rejects.toThrow("rpc: can't find method Allocations.Nope");
});
