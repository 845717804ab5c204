/**
 * Namespaces through the API: create, read, list, update, delete; jobs and
 * what they make kept apart by namespace; ?namespace=* lists; ACL namespace
 * rules judged in the namespace a request is about; all of it kept across a
 * restart of the server.
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { objectNamespaces } from "../../src/api/acl/object-namespace.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { Server } from "../../src/server/server.ts";
import type { AllocListStub } from "../../src/structs/alloc.ts";
import type { Evaluation } from "../../src/structs/evaluation.ts";
import type { JobListStub } from "../../src/structs/job.ts";
import type { Namespace } from "../../src/structs/namespace.ts";
import { openTestServer, testJob, testNode } from "../server/fixtures.ts";

function appOf(server: Server, acl: boolean) {
  const guard = {
    resolver: server.acl,
    objectNamespace: objectNamespaces({
      alloc: (id) => server.namespaceOf("alloc", id),
      evaluation: (id) => server.namespaceOf("evaluation", id),
      deployment: (id) => server.namespaceOf("deployment", id),
    }),
    namespaces: () => server.namespaces.list().map((namespace) => namespace.Name),
  };
  return createApp(pino({ level: "silent" }), serverRoutes(server, acl), acl ? { acl: guard } : {});
}

function client(app: ReturnType<typeof appOf>, token?: string) {
  return async <T>(method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, headers: token ? { "X-Nomad-Token": token } : {}, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, body: (res.ok && text !== "" ? JSON.parse(text) : undefined) as T, error: res.ok ? "" : text, index: Number(res.headers.get("X-Nomad-Index")) };
  };
}

describe("namespaces without ACLs", () => {
  const { server, dataDir } = openTestServer();
  server.nodes.upsert(testNode());
  const call = client(appOf(server, false));

  test("default always exists; a new one is created, read, listed, updated", async () => {
    expect((await call<Namespace[]>("GET", "/v1/namespaces")).body.map((ns) => ns.Name)).toEqual(["default"]);
    expect((await call<Namespace>("GET", "/v1/namespace/default")).body).toMatchObject({ Name: "default", Description: "Default shared namespace" });
    const created = await call("PUT", "/v1/namespace/team-a", { Name: "team-a", Description: "Team A", Meta: { owner: "a" } });
    expect(created.status).toBe(200);
    expect(created.index).toBeGreaterThan(0);
    expect((await call("POST", "/v1/namespace", { Name: "team-b" })).status).toBe(200);
    const read = await call<Namespace>("GET", "/v1/namespace/team-a");
    expect(read.body).toMatchObject({ Name: "team-a", Description: "Team A", Meta: { owner: "a" }, CreateIndex: created.index, ModifyIndex: created.index });
    await call("PUT", "/v1/namespace/team-a", { Name: "team-a", Description: "Team A, renamed" });
    expect((await call<Namespace>("GET", "/v1/namespace/team-a")).body).toMatchObject({ Description: "Team A, renamed", CreateIndex: created.index });
    expect((await call<Namespace[]>("GET", "/v1/namespaces")).body.map((ns) => ns.Name)).toEqual(["default", "team-a", "team-b"]);
    expect((await call<Namespace[]>("GET", "/v1/namespaces?prefix=team-b")).body.map((ns) => ns.Name)).toEqual(["team-b"]);
  });

  test("bad names and bodies are refused naming the field, and change nothing", async () => {
    const before = server.index;
    expect(await call("PUT", "/v1/namespace/bad_name", {})).toMatchObject({ status: 400, error: expect.stringContaining("Name: must be 1-128 letters, digits or '-'") });
    expect(await call("PUT", "/v1/namespace/x", { Name: "y" })).toMatchObject({ status: 400, error: "Namespace name does not match request path" });
    expect(await call("PUT", "/v1/namespace/x", { Description: "d".repeat(300) })).toMatchObject({ status: 400, error: expect.stringContaining("Description: must be at most 256 characters") });
    expect(await call("PUT", "/v1/namespace/x", { Colour: "red" })).toMatchObject({ status: 400, error: expect.stringContaining("Colour") });
    expect(await call("GET", "/v1/namespace/nope")).toMatchObject({ status: 404, error: 'namespace "nope" not found' });
    expect(server.index).toBe(before);
  });

  test("a job goes to an existing namespace only; its allocs, evals and deployments are listed there", async () => {
    expect(await call("PUT", "/v1/jobs", { Job: { ...testJob("ghost"), Namespace: "nope" } })).toMatchObject({ status: 400, error: 'job "ghost": namespace "nope" does not exist' });
    expect((await call("PUT", "/v1/jobs", { Job: { ...testJob("web-a"), Namespace: "team-a" } })).status).toBe(200);
    // A job without a Namespace takes the request's, as Nomad's HTTP agent does.
    expect((await call("PUT", "/v1/jobs?namespace=team-b", { Job: testJob("web-b") })).status).toBe(200);
    expect((await call("PUT", "/v1/jobs", { Job: testJob("web-default") })).status).toBe(200);

    const ids = async (path: string) => (await call<{ ID: string }[]>("GET", path)).body.map((item) => item.ID).sort();
    expect(await ids("/v1/jobs")).toEqual(["web-default"]);
    expect(await ids("/v1/jobs?namespace=team-a")).toEqual(["web-a"]);
    expect(await ids("/v1/jobs?namespace=*")).toEqual(["web-a", "web-b", "web-default"]);
    const allocs = (await call<AllocListStub[]>("GET", "/v1/allocations?namespace=team-b")).body;
    expect(allocs.map((alloc) => [alloc.JobID, alloc.Namespace])).toEqual([["web-b", "team-b"]]);
    expect((await call<Evaluation[]>("GET", "/v1/evaluations?namespace=team-a")).body.map((evaluation) => evaluation.JobID)).toEqual(["web-a"]);
    expect((await call<{ JobID: string }[]>("GET", "/v1/deployments?namespace=*")).body.map((d) => d.JobID).sort()).toEqual(["web-a", "web-b", "web-default"]);
    expect((await call<{ JobID: string }[]>("GET", "/v1/deployments")).body.map((d) => d.JobID)).toEqual(["web-default"]);

    expect((await call<JobListStub>("GET", "/v1/job/web-a?namespace=team-a")).body).toMatchObject({ ID: "web-a", Namespace: "team-a" });
    expect(await call("GET", "/v1/job/web-a")).toMatchObject({ status: 404, error: 'job "web-a" not found' });
    // Not in "default": already gone there, which Nomad 1.x answers with no evaluation, and team-a's job stays.
    expect(await call("DELETE", "/v1/job/web-a")).toMatchObject({ status: 200, body: { EvalID: "" } });
    expect((await call<JobListStub>("GET", "/v1/job/web-a?namespace=team-a")).body).toMatchObject({ ID: "web-a", Stop: false });
    // One job per ID across namespaces, said plainly.
    expect(await call("PUT", "/v1/jobs", { Job: { ...testJob("web-a"), Namespace: "team-b" } })).toMatchObject({
      status: 400,
      error: 'job "web-a": a job "web-a" already exists in namespace "team-a" (drover keeps job IDs unique across namespaces)',
    });
  });

  test("a namespace's Capabilities say which task drivers its jobs may use", async () => {
    await call("PUT", "/v1/namespace/no-raw", { Name: "no-raw", Capabilities: { DisabledTaskDrivers: ["raw_exec"] } });
    expect(await call("PUT", "/v1/jobs", { Job: { ...testJob("raw"), Namespace: "no-raw" } })).toMatchObject({
      status: 400,
      error: 'job "raw": used task driver "raw_exec" is not allowed in namespace "no-raw"',
    });
    await call("PUT", "/v1/namespace/no-raw", { Name: "no-raw", Capabilities: { EnabledTaskDrivers: ["exec"] } });
    expect((await call("PUT", "/v1/jobs", { Job: { ...testJob("raw"), Namespace: "no-raw" } })).status).toBe(400);
    await call("DELETE", "/v1/namespace/no-raw");
  });

  test("a namespace with jobs, and default, cannot be deleted; an empty one can", async () => {
    expect(await call("DELETE", "/v1/namespace/default")).toMatchObject({ status: 400, error: "default namespace can not be deleted" });
    expect(await call("DELETE", "/v1/namespace/team-a")).toMatchObject({ status: 400, error: expect.stringContaining('namespace "team-a" contains at least one job "web-a"') });
    expect((await call("DELETE", "/v1/job/web-a?namespace=team-a&purge=true")).status).toBe(200);
    expect((await call("DELETE", "/v1/namespace/team-a")).status).toBe(200);
    expect((await call("GET", "/v1/namespace/team-a")).status).toBe(404);
    expect((await call("DELETE", "/v1/namespace/team-a")).status).toBe(404);
  });

  test("a namespace holding variables cannot be deleted until they are removed", async () => {
    await call("PUT", "/v1/namespace/vars", { Name: "vars" });
    expect((await call("PUT", "/v1/var/app/one?namespace=vars", { Items: { a: "1" } })).status).toBe(200);
    expect((await call("PUT", "/v1/var/app/two?namespace=vars", { Items: { b: "2" } })).status).toBe(200);
    const before = server.index;
    expect(await call("DELETE", "/v1/namespace/vars")).toMatchObject({ status: 400, error: 'namespace "vars" still holds 2 variables; remove them before deleting it' });
    expect(server.index).toBe(before);
    expect((await call<Namespace>("GET", "/v1/namespace/vars")).body).toMatchObject({ Name: "vars" });
    // A variable of the same path in another namespace does not count.
    expect((await call("PUT", "/v1/var/app/one", { Items: { a: "1" } })).status).toBe(200);
    expect((await call("DELETE", "/v1/var/app/two?namespace=vars")).status).toBe(204);
    expect(await call("DELETE", "/v1/namespace/vars")).toMatchObject({ status: 400, error: 'namespace "vars" still holds 1 variable; remove them before deleting it' });
    expect((await call("DELETE", "/v1/var/app/one?namespace=vars")).status).toBe(204);
    expect((await call("DELETE", "/v1/namespace/vars")).status).toBe(200);
    expect((await call("GET", "/v1/namespace/vars")).status).toBe(404);
    expect((await call<{ Path: string }[]>("GET", "/v1/vars?namespace=*")).body.map((variable) => variable.Path)).toEqual(["app/one"]);
  });

  test("namespaces and the jobs in them survive a restart", async () => {
    server.close();
    const reopened = Server.open({ dataDir, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12 });
    try {
      const again = client(appOf(reopened, false));
      expect((await again<Namespace[]>("GET", "/v1/namespaces")).body.map((ns) => ns.Name)).toEqual(["default", "team-b"]);
      expect((await again<JobListStub>("GET", "/v1/job/web-b?namespace=team-b")).body).toMatchObject({ Namespace: "team-b" });
    } finally {
      reopened.close();
    }
  });
});

describe("namespaces with ACLs", async () => {
  const { server } = openTestServer();
  server.nodes.upsert(testNode());
  const app = appOf(server, true);
  const root = client(app, server.acl.bootstrap().SecretID);
  await root("PUT", "/v1/namespace/team-a", { Name: "team-a" });
  await root("PUT", "/v1/jobs", { Job: { ...testJob("a-job"), Namespace: "team-a" } });
  await root("PUT", "/v1/jobs", { Job: testJob("d-job") });
  await server.acl.upsertPolicy({ Name: "team-a", Description: "", Rules: 'namespace "team-a" { policy = "write" }' });
  const tokenA = server.acl.upsertToken({ AccessorID: "", Name: "a", Type: "client", Policies: ["team-a"], Global: false, ExpirationTTL: 0 }).SecretID;
  const teamA = client(app, tokenA);

  test("a token for one namespace lists, reads and writes there only", async () => {
    expect((await teamA<Namespace[]>("GET", "/v1/namespaces")).body.map((ns) => ns.Name)).toEqual(["team-a"]);
    expect((await teamA("GET", "/v1/namespace/team-a")).status).toBe(200);
    expect((await teamA("GET", "/v1/namespace/default")).status).toBe(403);
    expect((await teamA<JobListStub[]>("GET", "/v1/jobs?namespace=team-a")).body.map((job) => job.ID)).toEqual(["a-job"]);
    expect((await teamA("GET", "/v1/jobs")).status).toBe(403);
    expect((await teamA<JobListStub[]>("GET", "/v1/jobs?namespace=*")).body.map((job) => job.ID)).toEqual(["a-job"]);
    // The job's own Namespace is what a register is judged by, whatever ?namespace= says.
    expect((await teamA("PUT", "/v1/jobs", { Job: { ...testJob("a-two"), Namespace: "team-a" } })).status).toBe(200);
    expect((await teamA("PUT", "/v1/jobs", { Job: testJob("sneaky") })).status).toBe(403);
    expect((await root("GET", "/v1/job/sneaky")).status).toBe(404);
    expect((await teamA("PUT", "/v1/namespace/team-c", { Name: "team-c" })).status).toBe(403);
  });

  test("the event stream with namespace=* shows only the namespaces the token may read", async () => {
    const controller = new AbortController();
    const res = await app.request("/v1/event/stream?topic=Job&namespace=*&index=0", { headers: { "X-Nomad-Token": tokenA }, signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const keys: string[] = [];
    let text = "";
    // a-job came before d-job, a-two after it: once a-two is seen, d-job would have been.
    while (!keys.includes("a-two")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      const lines = text.split("\n");
      text = lines.pop()!;
      for (const line of lines.filter((entry) => entry.trim() !== "" && entry !== "{}")) keys.push(...(JSON.parse(line) as { Events: { Key: string }[] }).Events.map((event) => event.Key));
    }
    controller.abort();
    await reader.cancel();
    expect(keys).toContain("a-job");
    expect(keys).not.toContain("d-job");
  });

  test("an alloc or eval by ID is judged in its own namespace", async () => {
    const [mine] = (await root<AllocListStub[]>("GET", "/v1/allocations?namespace=team-a")).body;
    const [theirs] = (await root<AllocListStub[]>("GET", "/v1/allocations")).body;
    expect((await teamA("GET", `/v1/allocation/${mine!.ID}`)).status).toBe(200);
    expect((await teamA("GET", `/v1/allocation/${theirs!.ID}`)).status).toBe(403);
    expect((await teamA("GET", `/v1/allocation/${theirs!.ID}?namespace=team-a`)).status).toBe(403);
    expect((await teamA("GET", `/v1/evaluation/${mine!.EvalID}`)).status).toBe(200);
    expect((await teamA("GET", `/v1/evaluation/${theirs!.EvalID}`)).status).toBe(403);
  });
});
