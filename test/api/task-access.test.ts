/**
 * The task-access guard in front of every route: what a task's identity on
 * its API socket may call, and what a TCP caller is let through as, by who
 * holds the other end of its connection (a fake verdict here; the real one
 * is test/client/task-peers.test.ts).
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { DEFAULT_TASK_GRANTS, taskAccess, taskMayCall, type Refusal, type RequestOrigin } from "../../src/api/task-access.ts";
import type { PeerVerdict } from "../../src/client/task-peers.ts";
import { Acl } from "../../src/acl/acl.ts";
import type { Resolution } from "../../src/acl/resolver.ts";
import { namespace, VARIABLES, type RouteRule } from "../../src/api/acl/route-rules.ts";

const OWN = "11111111-2222-3333-4444-555555555555";
const OTHER = "99999999-2222-3333-4444-555555555555";
const task = { allocId: OWN, taskName: "web", jobId: "shop", namespace: "default", group: "front" };
const RULES: RouteRule[] = [
  { methods: ["GET"], path: "/v1/var/:path{.+}", rule: VARIABLES },
  { methods: ["GET"], path: "/v1/jobs", rule: namespace("list-jobs") },
  { methods: ["GET"], path: "/v1/allocation/:id", rule: namespace("read-job") },
];

describe("a task identity's grants", () => {
  test("read its own alloc, its stats and its logs; nothing of another alloc; nothing that writes", () => {
    const may = (method: string, path: string) => taskMayCall(task, DEFAULT_TASK_GRANTS, method, path);
    expect(may("GET", `/v1/allocation/${OWN}`)).toBe(true);
    expect(may("GET", `/v1/client/allocation/${OWN}/stats`)).toBe(true);
    expect(may("GET", `/v1/client/fs/logs/${OWN}`)).toBe(true);
    expect(may("GET", "/v1/agent/health")).toBe(true);
    expect(may("GET", `/v1/allocation/${OTHER}`)).toBe(false);
    // A prefix of its own id is another id as far as a grant goes.
    expect(may("GET", `/v1/allocation/${OWN.slice(0, 8)}`)).toBe(false);
    expect(may("GET", "/v1/jobs")).toBe(false);
    expect(may("POST", "/v1/jobs")).toBe(false);
    expect(may("POST", `/v1/client/allocation/${OWN}/exec`)).toBe(false);
    expect(may("DELETE", "/v1/job/shop")).toBe(false);
    expect(taskMayCall(task, [], "GET", `/v1/allocation/${OWN}`)).toBe(false);
  });
});

describe("the guard", () => {
  const refusals: Refusal[] = [];
  let verdict: PeerVerdict = { kind: "host" };
  const app = createApp(
    pino({ level: "silent" }),
    [
      (a) => {
        a.get("/v1/jobs", (c) => c.json([]));
        a.get("/v1/allocation/:id", (c) => c.json({ ID: c.req.param("id") }));
        a.get("/v1/var/:path{.+}", (c) => c.json({ Path: c.req.param("path") }));
      },
    ],
    { guards: [taskAccess({ identifyPeer: () => verdict, refused: (refusal) => refusals.push(refusal) })], routeRules: RULES },
  );
  const tcp: RequestOrigin = { connection: { kind: "tcp", remote: { address: "127.0.0.1", port: 40000 }, local: { address: "127.0.0.1", port: 4646 } } };
  const call = (path: string, origin: RequestOrigin) => app.request(path, {}, origin);

  test("a TCP caller on the host or elsewhere goes on to the routes", async () => {
    for (const kind of ["host", "remote"] as const) {
      verdict = { kind };
      expect((await call("/v1/jobs", tcp)).status).toBe(200);
    }
  });

  test("a task over TCP, a local caller that cannot be told, or one whose socket is closed gets Nomad's 403, each refusal saying which", async () => {
    refusals.length = 0;
    for (const refused of [{ kind: "task", task: { allocId: OWN, taskName: "web" } }, { kind: "unknown-local" }, { kind: "gone" }] as const) {
      verdict = refused;
      const response = await call("/v1/jobs", tcp);
      expect(response.status).toBe(403);
      expect(await response.text()).toBe("Permission denied");
    }
    expect(refusals).toEqual([
      { caller: "task", why: expect.stringContaining(`task ${OWN}/web`) },
      { caller: "unidentified", why: "the caller is on this host, but no process holds its socket" },
      { caller: "gone", why: "the caller closed its connection before the request was judged" },
    ]);
  });

  test("a caller found nowhere whose request the server saw end is gone, not a task", async () => {
    refusals.length = 0;
    verdict = { kind: "unknown-local" };
    const aborted = AbortSignal.abort();
    expect((await app.request("/v1/jobs", { signal: aborted }, tcp)).status).toBe(403);
    expect(refusals.map((refusal) => refusal.caller)).toEqual(["gone"]);
  });

  test("on a task's API socket, its identity decides", async () => {
    verdict = { kind: "task", task };
    const socket: RequestOrigin = { connection: { kind: "unix", path: "/x/api.sock" }, task };
    expect(await (await call(`/v1/allocation/${OWN}`, socket)).json()).toEqual({ ID: OWN });
    expect((await call(`/v1/allocation/${OTHER}`, socket)).status).toBe(403);
    expect((await call("/v1/jobs", socket)).status).toBe(403);
    expect((await call("/v1/jobs", { connection: { kind: "unix", path: "/x/api.sock" } })).status).toBe(403);
  });

  test("on its socket, a task reads its own job's variables (Nomad's implicit paths) and no others", async () => {
    const socket: RequestOrigin = { connection: { kind: "unix", path: "/x/api.sock" }, task };
    for (const path of ["nomad/jobs", "nomad/jobs/shop", "nomad/jobs/shop/front", "nomad/jobs/shop/front/web"]) {
      expect((await call(`/v1/var/${path}`, socket)).status).toBe(200);
    }
    for (const path of ["nomad/jobs/other", "nomad/jobs/shop/front/web/deeper", "app/config", "nomad/jobs/shop?namespace=prod"]) {
      expect((await call(`/v1/var/${path}`, socket)).status).toBe(403);
    }
    expect((await app.request("/v1/var/nomad/jobs/shop", { method: "PUT", body: "{}" }, socket)).status).toBe(403);
    // Over TCP the task is not known by its socket: refused as before.
    verdict = { kind: "task", task };
    expect((await call("/v1/var/nomad/jobs/shop", tcp)).status).toBe(403);
  });

  test("a task of another namespace reads its job's variables there, not the same paths of the default namespace", async () => {
    const prod = { ...task, namespace: "prod" };
    const socket: RequestOrigin = { connection: { kind: "unix", path: "/x/api.sock" }, task: prod };
    expect((await call("/v1/var/nomad/jobs/shop?namespace=prod", socket)).status).toBe(200);
    // No ?namespace= is the default namespace's variable, which belongs to default's job "shop".
    expect((await call("/v1/var/nomad/jobs/shop", socket)).status).toBe(403);
    expect((await call("/v1/var/nomad/jobs/shop?namespace=default", socket)).status).toBe(403);
  });
});

describe("with ACLs on", () => {
  // A token "reader" that may list jobs; no anonymous policy.
  const reader = new Acl(false, [{ Namespaces: [{ Name: "default", Policy: "read", Capabilities: ["list-jobs", "read-job"], Variables: null }], HostVolumes: null, Agent: null, Node: null, Operator: null, Quota: null, Plugin: null }]);
  const resolve = (secret: string | undefined): Resolution =>
    secret === undefined ? { caller: { acl: new Acl(false, []) } } : secret === "reader" ? { caller: { acl: reader } } : { refused: "ACL token not found" };
  const app = createApp(
    pino({ level: "silent" }),
    [
      (a) => {
        a.get("/v1/jobs", (c) => c.json([]));
        a.get("/v1/allocation/:id", (c) => c.json({ ID: c.req.param("id") }));
      },
    ],
    {
      guards: [taskAccess({ aclEnabled: true, identifyPeer: () => ({ kind: "task", task }) })],
      acl: { resolver: { resolve } },
      routeRules: RULES,
    },
  );
  const tcp: RequestOrigin = { connection: { kind: "tcp", remote: { address: "127.0.0.1", port: 40000 }, local: { address: "127.0.0.1", port: 4646 } } };
  const socket: RequestOrigin = { connection: { kind: "unix", path: "/x/api.sock" }, task };
  const call = (path: string, origin: RequestOrigin, token?: string) => app.request(path, token ? { headers: { "X-Nomad-Token": token } } : {}, origin);

  test("a task without a token is anonymous; with one, its token decides", async () => {
    expect((await call("/v1/jobs", tcp)).status).toBe(403);
    expect((await call("/v1/jobs", tcp, "reader")).status).toBe(200);
    expect(await (await call("/v1/jobs", tcp, "stolen")).text()).toBe("ACL token not found");
  });

  test("on its socket, its own grant needs no token; beyond it, its token decides", async () => {
    expect((await call(`/v1/allocation/${OWN}`, socket)).status).toBe(200);
    expect((await call(`/v1/allocation/${OTHER}`, socket)).status).toBe(403);
    expect((await call(`/v1/allocation/${OTHER}`, socket, "reader")).status).toBe(200);
  });
});
