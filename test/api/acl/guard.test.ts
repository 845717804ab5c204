/**
 * The ACL guard in front of the server's routes: where a token is read, what
 * a refusal says, and that a refused request changes nothing.
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { createApp } from "../../../src/api/app.ts";
import { requestToken } from "../../../src/api/acl/guard.ts";
import { serverRoutes } from "../../../src/api/routes/server.ts";
import { openTestServer, testJob, testNode } from "../../server/fixtures.ts";

const { server } = openTestServer();
server.nodes.upsert(testNode());
const refusals: { reason: string; path: string }[] = [];
const app = createApp(pino({ level: "silent" }), serverRoutes(server, true), { acl: { resolver: server.acl, refused: (refusal) => refusals.push(refusal) } });

const root = server.acl.bootstrap().SecretID;
await server.acl.upsertPolicy({ Name: "reader", Description: "", Rules: `namespace "default" { policy = "read" }` });
const reader = server.acl.upsertToken({ AccessorID: "", Name: "r", Type: "client", Policies: ["reader"], Global: false, ExpirationTTL: 0 }).SecretID;

async function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown) {
  const res = await app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, text: await res.text() };
}

describe("the ACL guard", () => {
  test("the token comes from X-Nomad-Token or a bearer Authorization header, nowhere else", async () => {
    expect(requestToken(new Headers({ "X-Nomad-Token": ` ${reader} ` }))).toBe(reader);
    expect(requestToken(new Headers({ Authorization: `Bearer ${reader}` }))).toBe(reader);
    expect(requestToken(new Headers({ Authorization: `Basic ${reader}` }))).toBeUndefined();
    expect((await call("GET", "/v1/jobs", { Authorization: `Bearer ${reader}` })).status).toBe(200);
    expect(await call("GET", `/v1/jobs?token=${reader}`)).toEqual({ status: 403, text: "Permission denied" });
  });

  test("token/self echoes the caller's own secret, from either header, as Nomad's does", async () => {
    const self = await call("GET", "/v1/acl/token/self", { Authorization: `Bearer ${reader}` });
    expect(self.status).toBe(200);
    expect(JSON.parse(self.text)).toMatchObject({ Name: "r", Type: "client", SecretID: reader });
    expect(JSON.parse((await call("GET", "/v1/acl/tokens", { "X-Nomad-Token": root })).text)).not.toContainEqual(expect.objectContaining({ SecretID: reader }));
  });

  test("a policy with empty Rules is stored, as Nomad stores it, and grants nothing", async () => {
    const put = await call("PUT", "/v1/acl/policy/empty", { "X-Nomad-Token": root }, { Name: "empty", Description: "nothing yet", Rules: "" });
    expect(put.status).toBe(200);
    expect(JSON.parse((await call("GET", "/v1/acl/policy/empty", { "X-Nomad-Token": root })).text)).toMatchObject({ Name: "empty", Rules: "", RulesJSON: { Namespaces: null } });
    const holder = server.acl.upsertToken({ AccessorID: "", Name: "e", Type: "client", Policies: ["empty"], Global: false, ExpirationTTL: 0 }).SecretID;
    expect(await call("GET", "/v1/jobs", { "X-Nomad-Token": holder })).toEqual({ status: 403, text: "Permission denied" });
  });

  test("Nomad's refusals: an unknown token, and a token without the capability", async () => {
    expect(await call("GET", "/v1/jobs", { "X-Nomad-Token": "00000000-0000-0000-0000-000000000000" })).toEqual({ status: 403, text: "ACL token not found" });
    expect(await call("GET", "/v1/jobs")).toEqual({ status: 403, text: "Permission denied" });
    expect(await call("GET", "/v1/nodes", { "X-Nomad-Token": reader })).toEqual({ status: 403, text: "Permission denied" });
    expect(refusals.at(-1)).toMatchObject({ path: "/v1/nodes", reason: "Permission denied" });
    expect(JSON.stringify(refusals)).not.toContain(reader);
  });

  test("a refused write changes nothing", async () => {
    const before = server.index;
    expect((await call("PUT", "/v1/jobs", { "X-Nomad-Token": reader }, { Job: testJob("web") })).status).toBe(403);
    expect(server.index).toBe(before);
    expect((await call("GET", "/v1/job/web", { "X-Nomad-Token": root })).status).toBe(404);
    expect((await call("PUT", "/v1/jobs", { "X-Nomad-Token": root }, { Job: testJob("web") })).status).toBe(200);
    expect(server.index).toBeGreaterThan(before);
  });

  test("the event stream's rule follows its topics", async () => {
    const stream = async (query: string) => {
      const controller = new AbortController();
      const res = await app.request(`/v1/event/stream${query}`, { headers: { "X-Nomad-Token": reader }, signal: controller.signal });
      controller.abort();
      await res.body?.cancel();
      return res.status;
    };
    expect(await stream("?topic=Job")).toBe(200);
    expect(await stream("?topic=Job&topic=Node")).toBe(403);
    expect(await stream("")).toBe(403);
  });

  test("search leaves out the contexts the caller may not read", async () => {
    const res = await app.request("/v1/search", { method: "PUT", headers: { "X-Nomad-Token": reader }, body: JSON.stringify({ Prefix: "", Context: "all" }) });
    const body = (await res.json()) as { Matches: Record<string, string[]> };
    expect(Object.keys(body.Matches)).toContain("jobs");
    expect(Object.keys(body.Matches)).not.toContain("nodes");
  });

  test("with ACLs off the ACL endpoints say so, and everything else is open", async () => {
    const open = createApp(pino({ level: "silent" }), serverRoutes(server, false));
    expect((await open.request("/v1/acl/token/self")).status).toBe(400);
    expect(await (await open.request("/v1/acl/token/self")).text()).toBe("ACL support disabled");
    expect((await open.request("/v1/nodes")).status).toBe(200);
  });
});
