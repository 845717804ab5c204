import { describe, expect, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { Acl } from "../../src/acl/acl.ts";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import type { VariableMetadata } from "../../src/structs/variable.ts";
import { openTestServer, testJob, testNode } from "../server/fixtures.ts";
import { waitFor } from "../helpers/index.ts";

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
      aud: "nomadproject.io",
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

  test("a named identity: its name ends sub, its audience is aud, its ttl an exp; it is a token until it expires", async () => {
    server.jobs.register(testJob("named-id"));
    const named = server.allocs.get(server.jobs.allocations("named-id")[0]!.ID);
    expect((await call("PUT", "/v1/var/nomad/jobs/named-id", root, { Items: { k: "v" } })).status).toBe(200);
    const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;

    const vault = server.identities.sign(named, "srv", { Name: "vault", Audience: ["vault.io"], TTL: 3600 * 1e9 });
    const claims = claimsOf(vault);
    expect(claims).toMatchObject({ sub: "global:default:named-id:web:srv:vault", aud: "vault.io", nomad_job_id: "named-id", nomad_task: "srv" });
    expect(claims.exp).toBe((claims.iat as number) + 3600);
    expect(claimsOf(server.identities.sign(named, "srv", { Name: "both", Audience: ["a", "b"], TTL: 0 }))).toMatchObject({ aud: ["a", "b"] });
    expect(claimsOf(server.identities.sign(named, "srv", { Name: "none", Audience: [], TTL: 0 })).aud).toBeUndefined();
    expect(claimsOf(server.identities.sign(named, "srv")).exp).toBeUndefined();
    expect((await call("GET", "/v1/var/nomad/jobs/named-id", vault)).status).toBe(200);

    const brief = server.identities.sign(named, "srv", { Name: "brief", Audience: ["x"], TTL: 1e9 });
    expect((await call("GET", "/v1/var/nomad/jobs/named-id", brief)).status).toBe(200);
    await waitFor("the expired token refused", async () => (await call("GET", "/v1/var/nomad/jobs/named-id", brief)).text === "ACL token not found", { timeoutMs: 5_000 });
    server.jobs.deregister("named-id", true);
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

describe("key rotation (/v1/operator/keyring)", () => {
  const { server: keyed, dataDir: keyedDir } = openTestServer();
  keyed.nodes.upsert(testNode());
  const api = createApp(pino({ level: "silent" }), serverRoutes(keyed, true), { acl: { resolver: keyed.identities } });
  const admin = keyed.acl.bootstrap().SecretID;
  const send = async (method: string, path: string, token?: string, body?: unknown) => {
    const res = await api.request(path, { method, headers: token ? { "X-Nomad-Token": token } : {}, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, text, index: res.headers.get("X-Nomad-Index"), json: () => JSON.parse(text) as unknown };
  };
  type KeyMeta = { KeyID: string; State: string; Algorithm: string; CreateTime: number; CreateIndex: number };
  const keys = async () => (await send("GET", "/v1/operator/keyring/keys", admin)).json() as KeyMeta[];
  keyed.jobs.register(testJob("rotated"));
  const rotatedAlloc = keyed.allocs.get(keyed.jobs.allocations("rotated")[0]!.ID);
  /** The task's token signed by the first key. */
  let before = "";
  const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()) as { kid: string }).kid;

  test("a rotation makes a new active key; tokens and variables of the old one still work; new ones use the new key", async () => {
    const [first] = await keys();
    expect(first).toMatchObject({ State: "active", Algorithm: "aes256-gcm" });
    before = keyed.identities.sign(rotatedAlloc, "srv");
    expect((await send("PUT", "/v1/var/nomad/jobs/rotated", admin, { Items: { colour: "blue" } })).status).toBe(200);

    const rotated = await send("PUT", "/v1/operator/keyring/rotate", admin);
    expect(rotated.status).toBe(200);
    const { Key } = rotated.json() as { Key: KeyMeta };
    expect(Key).toMatchObject({ State: "active", Algorithm: "aes256-gcm" });
    expect(Key.KeyID).not.toBe(first!.KeyID);
    expect(Number(rotated.index)).toBeGreaterThan(first!.CreateIndex);
    expect((await keys()).map((key) => [key.KeyID, key.State])).toEqual([
      [first!.KeyID, "inactive"],
      [Key.KeyID, "active"],
    ]);

    // The token signed before still verifies: its key is still in the JWKS, and the API still takes it.
    const jwks = (await send("GET", "/.well-known/jwks.json")).json() as { keys: { kid: string }[] };
    expect(jwks.keys.map((key) => key.kid)).toEqual([Key.KeyID, first!.KeyID]);
    expect(kidOf(before)).toBe(first!.KeyID);
    expect(await send("GET", "/v1/var/nomad/jobs/rotated", before)).toMatchObject({ status: 200 });
    expect((await send("GET", "/v1/var/nomad/jobs/rotated", before)).json()).toMatchObject({ Items: { colour: "blue" } });
    // What is signed and sealed from now on uses the new key.
    const after = keyed.identities.sign(rotatedAlloc, "srv");
    expect(kidOf(after)).toBe(Key.KeyID);
    expect((await send("GET", "/v1/var/nomad/jobs/rotated", after)).status).toBe(200);
  });

  test("a key in use is not removed: not the active one, not one that encrypts variables or signed a running allocation's tokens (unless forced)", async () => {
    const [old, active] = await keys();
    const activeRemoval = await send("DELETE", `/v1/operator/keyring/key/${active!.KeyID}`, admin);
    expect(activeRemoval).toMatchObject({ status: 500, text: "active root key cannot be deleted - call rotate first" });
    const inUse = await send("DELETE", `/v1/operator/keyring/key/${old!.KeyID}`, admin);
    expect(inUse.status).toBe(500);
    expect(inUse.text).toBe(
      "root key in use, cannot delete: it encrypts 1 variable (rotate with full=true to re-encrypt them); it signed the workload identities of 1 running allocation (kept until they stop)",
    );
    expect((await keys()).length).toBe(2);

    // A full rotation moves the variable to the new key; the running allocation still holds a token of the old one.
    const full = await send("PUT", "/v1/operator/keyring/rotate?full=true", admin);
    const newest = (full.json() as { Key: KeyMeta }).Key;
    const stillSigned = await send("DELETE", `/v1/operator/keyring/key/${old!.KeyID}`, admin);
    expect(stillSigned.text).toBe("root key in use, cannot delete: it signed the workload identities of 1 running allocation (kept until they stop)");
    expect(await send("DELETE", `/v1/operator/keyring/key/${old!.KeyID}?force=maybe`, admin)).toMatchObject({ status: 422, text: "invalid force parameter" });
    // Forced, it goes, and the token it signed with it.
    expect((await send("DELETE", `/v1/operator/keyring/key/${old!.KeyID}?force=true`, admin)).status).toBe(200);
    expect((await keys()).map((key) => [key.KeyID, key.State])).toEqual([
      [active!.KeyID, "inactive"],
      [newest.KeyID, "active"],
    ]);
    expect(await send("GET", "/v1/var/nomad/jobs/rotated", before)).toMatchObject({ status: 403, text: "ACL token not found" });
    // Removing a key that is gone is done, as Nomad answers it.
    expect((await send("DELETE", `/v1/operator/keyring/key/${old!.KeyID}`, admin)).status).toBe(200);
    expect(readdirSync(join(keyedDir, "server", "keystore")).sort()).toEqual([`${active!.KeyID}.json`, `${newest.KeyID}.json`].sort());
    expect((await send("GET", "/v1/var/nomad/jobs/rotated", admin)).json()).toMatchObject({ Items: { colour: "blue" } });

    // The middle key signed the allocation's later token: in use, across a restart too, until the allocation stops.
    keyed.close();
    const reopened = openTestServer({ dataDir: keyedDir }).server;
    expect(() => reopened.keyring.remove(active!.KeyID, false)).toThrow("root key in use, cannot delete: it signed the workload identities of 1 running allocation");
    reopened.jobs.deregister("rotated", false);
    expect(reopened.keyring.remove(active!.KeyID, false).Index).toBeGreaterThan(0);
    expect(reopened.keyring.list().map((key) => [key.KeyID, key.State])).toEqual([[newest.KeyID, "active"]]);
    expect(reopened.variables.read({ acl: Acl.management }, "default", "nomad/jobs/rotated")?.Items).toEqual({ colour: "blue" });
    reopened.close();
  });

  test("the keyring endpoints need a management token", async () => {
    const reopened = openTestServer({ dataDir: keyedDir }).server;
    const guarded = createApp(pino({ level: "silent" }), serverRoutes(reopened, true), { acl: { resolver: reopened.identities } });
    for (const [method, path] of [["GET", "/v1/operator/keyring/keys"], ["PUT", "/v1/operator/keyring/rotate"], ["DELETE", `/v1/operator/keyring/key/${reopened.keyring.list()[0]!.KeyID}`]] as const) {
      const res = await guarded.request(path, { method });
      expect([method, path, res.status]).toEqual([method, path, 403]);
    }
    expect(reopened.keyring.list().length).toBe(1);
    reopened.close();
  });
});
