import { describe, expect, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import type { VariableMetadata } from "../../src/structs/variable.ts";
import { openTestServer, testJob, testNode } from "../server/fixtures.ts";

const { server, dataDir } = openTestServer();
server.nodes.upsert(testNode());
const app = createApp(pino({ level: "silent" }), serverRoutes(server, true), { acl: { resolver: server.identities } });
const root = server.acl.bootstrap().SecretID;

async function call(method: string, path: string, token?: string, body?: unknown) {
  const res = await app.request(path, { method, headers: token ? { "X-Nomad-Token": token } : {}, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) as unknown };
}

server.jobs.register(testJob("web-app"));
const alloc = server.allocs.get(server.jobs.allocations("web-app")[0]!.ID);
const identity = server.identities.sign(alloc, "srv");

describe("workload identity", () => {
  test("a task's JWT carries Nomad's claims and verifies against /.well-known/jwks.json", async () => {
    const [header, payload, signature] = identity.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString());
    expect(claims).toMatchObject({
      nomad_namespace: "default",
      nomad_job_id: "web-app",
      nomad_allocation_id: alloc.ID,
      nomad_task: "srv",
      sub: "global:default:web-app:web:srv:default",
      aud: "nomad.io",
    });
    const { kid, alg } = JSON.parse(Buffer.from(header, "base64url").toString());
    expect(alg).toBe("EdDSA");
    const jwks = await call("GET", "/.well-known/jwks.json");
    expect(jwks.status).toBe(200);
    const { keys } = jwks.json() as { keys: { kid: string; kty: string; crv: string; x: string }[] };
    const key = keys.find((candidate) => candidate.kid === kid)!;
    expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", use: "sig", alg: "EdDSA" });
    const publicKey = createPublicKey({ key: { kty: key.kty, crv: key.crv, x: key.x }, format: "jwk" });
    expect(verify(null, Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, "base64url"))).toBe(true);
    expect(verify(null, Buffer.from(`${header}.${payload}x`), publicKey, Buffer.from(signature, "base64url"))).toBe(false);
  });

  test("the identity reads and lists its own job's variables, as Nomad's implicit policy allows, and nothing else", async () => {
    for (const path of ["nomad/jobs/web-app", "nomad/jobs/web-app/web/srv", "nomad/jobs/other", "app/config"]) {
      expect((await call("PUT", `/v1/var/${path}`, root, { Items: { where: path } })).status).toBe(200);
    }
    const own = await call("GET", "/v1/var/nomad/jobs/web-app", identity);
    expect(own.status).toBe(200);
    expect(own.json()).toMatchObject({ Items: { where: "nomad/jobs/web-app" } });
    expect((await call("GET", "/v1/var/nomad/jobs/web-app/web/srv", identity)).status).toBe(200);
    expect(await call("GET", "/v1/var/nomad/jobs/other", identity)).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await call("GET", "/v1/var/app/config", identity)).status).toBe(403);
    expect((await call("PUT", "/v1/var/nomad/jobs/web-app", identity, { Items: { k: "v" } })).status).toBe(403);
    expect((await call("GET", "/v1/jobs", identity)).status).toBe(403);
    const listed = (await call("GET", "/v1/vars?prefix=nomad/jobs", identity)).json() as VariableMetadata[];
    expect(listed.map((meta) => meta.Path)).toEqual(["nomad/jobs/web-app", "nomad/jobs/web-app/web/srv"]);
  });

  test("a tampered token, or one of a finished allocation, is not found; a restarted server still verifies its tokens", async () => {
    const [header, payload, signature] = identity.split(".") as [string, string, string];
    const forged = Buffer.from(Buffer.from(payload, "base64url").toString().replace("web-app", "other")).toString("base64url");
    expect(await call("GET", "/v1/var/nomad/jobs/other", `${header}.${forged}.${signature}`)).toMatchObject({ status: 403, text: "ACL token not found" });

    server.close();
    const reopened = openTestServer({ dataDir }).server;
    const again = createApp(pino({ level: "silent" }), serverRoutes(reopened, true), { acl: { resolver: reopened.identities } });
    expect((await again.request("/v1/var/nomad/jobs/web-app", { headers: { "X-Nomad-Token": identity } })).status).toBe(200);
    reopened.jobs.deregister("web-app", false);
    const refused = await again.request("/v1/var/nomad/jobs/web-app", { headers: { "X-Nomad-Token": identity } });
    expect([refused.status, await refused.text()]).toEqual([403, "ACL token not found"]);
    reopened.close();
  });

  test("OIDC discovery: Nomad's 404 without server.oidc_issuer; with it, the document and tokens that name their issuer", async () => {
    const without = await call("GET", "/.well-known/openid-configuration");
    expect(without).toMatchObject({ status: 404, text: "OIDC Discovery endpoint disabled" });

    const issued = openTestServer({ oidcIssuer: "https://nomad.example.com/" }).server;
    issued.nodes.upsert(testNode());
    const withIssuer = createApp(pino({ level: "silent" }), serverRoutes(issued, true), { acl: { resolver: issued.identities } });
    const discovery = await withIssuer.request("/.well-known/openid-configuration");
    expect(await discovery.json()).toEqual({
      issuer: "https://nomad.example.com/",
      jwks_uri: "https://nomad.example.com/.well-known/jwks.json",
      id_token_signing_alg_values_supported: ["EdDSA"],
      response_types_supported: ["code"],
      subject_types_supported: ["public"],
    });
    issued.jobs.register(testJob("issued"));
    const token = issued.identities.sign(issued.allocs.get(issued.jobs.allocations("issued")[0]!.ID), "srv");
    expect(JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString())).toMatchObject({ iss: "https://nomad.example.com/" });
    issued.close();
  });
});
