/**
 * Node pools through the API (Nomad 1.6's shapes): the built-in "all" and
 * "default", a pool created by a node that joins it, pools created, read,
 * updated and deleted; a job placed only on nodes of its pool; deletes
 * refused while a node or a live job is in a pool; all of it kept across a
 * restart of the server.
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { Server } from "../../src/server/server.ts";
import type { JobListStub } from "../../src/structs/job.ts";
import type { NodePool } from "../../src/structs/node-pool.ts";
import type { NodeListStub } from "../../src/structs/node.ts";
import { openTestServer, testJob, testNode } from "../server/fixtures.ts";

function client(server: Server, acl?: { token: string }) {
  const app = createApp(pino({ level: "silent" }), serverRoutes(server, acl !== undefined), acl ? { acl: { resolver: server.acl, namespaces: () => server.namespaces.list().map((ns) => ns.Name) } } : {});
  return async <T>(method: string, path: string, body?: unknown) => {
    const headers: Record<string, string> = acl?.token ? { "X-Nomad-Token": acl.token } : {};
    const res = await app.request(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await res.text();
    return { status: res.status, body: (res.ok && text !== "" ? JSON.parse(text) : undefined) as T, error: res.ok ? "" : text, index: Number(res.headers.get("X-Nomad-Index")) };
  };
}

describe("node pools", () => {
  const { server, dataDir } = openTestServer();
  const defaultNode = testNode({ Name: "in-default" });
  const gpuNode = testNode({ Name: "in-gpu", NodePool: "gpu" });
  server.nodes.upsert(defaultNode);
  server.nodes.upsert(gpuNode);
  const call = client(server);
  const names = async (path: string) => (await call<{ Name: string }[]>("GET", path)).body.map((item) => item.Name);

  test("all and default are built in; a node's pool is created when it joins it", async () => {
    const pools = (await call<NodePool[]>("GET", "/v1/node/pools")).body;
    expect(pools.map((pool) => [pool.Name, pool.Description])).toEqual([
      ["all", "Node pool with all nodes in the cluster."],
      ["default", "Default node pool."],
      ["gpu", ""],
    ]);
    expect((await call<NodePool>("GET", "/v1/node/pool/default")).body).toMatchObject({ Name: "default", Meta: null, SchedulerConfiguration: null });
    expect((await call<NodeListStub[]>("GET", "/v1/nodes")).body.map((node) => [node.Name, node.NodePool]).sort()).toEqual([
      ["in-default", "default"],
      ["in-gpu", "gpu"],
    ]);
    expect(await names("/v1/node/pool/gpu/nodes")).toEqual(["in-gpu"]);
    expect(await names("/v1/node/pool/default/nodes")).toEqual(["in-default"]);
    expect((await names("/v1/node/pool/all/nodes")).sort()).toEqual(["in-default", "in-gpu"]);
    expect((await call("GET", `/v1/node/${gpuNode.ID}`)).body).toMatchObject({ NodePool: "gpu" });
  });

  test("a pool is created, read, listed by prefix and updated", async () => {
    const created = await call("PUT", "/v1/node/pools", { Name: "prod", Description: "Production", Meta: { env: "prod" }, SchedulerConfiguration: { SchedulerAlgorithm: "spread" } });
    expect(created.status).toBe(200);
    expect(created.index).toBeGreaterThan(0);
    expect((await call<NodePool>("GET", "/v1/node/pool/prod")).body).toEqual({
      Name: "prod",
      Description: "Production",
      Meta: { env: "prod" },
      SchedulerConfiguration: { SchedulerAlgorithm: "spread", MemoryOversubscriptionEnabled: null },
      CreateIndex: created.index,
      ModifyIndex: created.index,
    });
    const updated = await call("POST", "/v1/node/pool/prod", { Name: "prod", Description: "Production nodes" });
    expect((await call<NodePool>("GET", "/v1/node/pool/prod")).body).toMatchObject({ Description: "Production nodes", Meta: null, CreateIndex: created.index, ModifyIndex: updated.index });
    expect(await names("/v1/node/pools?prefix=pr")).toEqual(["prod"]);
    expect(await names("/v1/node/pool/prod/nodes")).toEqual([]);
  });

  test("bad pools, built-ins and unknown pools are refused naming the problem, and change nothing", async () => {
    const before = server.index;
    expect(await call("PUT", "/v1/node/pools", { Name: "bad name" })).toMatchObject({ status: 400, error: expect.stringContaining("Name: must match regex") });
    expect(await call("PUT", "/v1/node/pools", { Name: "x", Description: "d".repeat(300) })).toMatchObject({ status: 400, error: expect.stringContaining("description longer than 256") });
    expect(await call("PUT", "/v1/node/pools", { Name: "x", Colour: "red" })).toMatchObject({ status: 400, error: expect.stringContaining("Colour") });
    expect(await call("PUT", "/v1/node/pool/x", { Name: "y" })).toMatchObject({ status: 400, error: "Node pool name does not match request path" });
    expect(await call("PUT", "/v1/node/pools", { Name: "default", Description: "mine" })).toMatchObject({ status: 400, error: 'modifying node pool "default" is not allowed' });
    expect(await call("DELETE", "/v1/node/pool/all")).toMatchObject({ status: 400, error: 'deleting built-in node pool "all" is not allowed' });
    expect(await call("GET", "/v1/node/pool/nope")).toMatchObject({ status: 404, error: "node pool not found" });
    expect(await call("GET", "/v1/node/pool/nope/nodes")).toMatchObject({ status: 200, body: [] });
    expect(await call("GET", "/v1/node/pool/gpu/nodes?prefix=a")).toMatchObject({ status: 400, error: "prefix argument not allowed" });
    expect(await call("PUT", "/v1/jobs", { Job: { ...testJob("ghost"), NodePool: "nope" } })).toMatchObject({ status: 400, error: 'job "ghost": job is in nonexistent node pool "nope"' });
    expect(server.index).toBe(before);
  });

  test("a job is placed only on nodes of its pool, and listed as the pool's job", async () => {
    expect((await call("PUT", "/v1/jobs", { Job: { ...testJob("on-gpu", { count: 3 }), NodePool: "gpu" } })).status).toBe(200);
    expect((await call("PUT", "/v1/jobs", { Job: testJob("on-default", { count: 3 }) })).status).toBe(200);
    // Too big for one node: "all" spreads them over both pools' nodes.
    expect((await call("PUT", "/v1/jobs", { Job: { ...testJob("anywhere", { count: 4, memory: 1500 }), NodePool: "all" } })).status).toBe(200);
    const nodesOf = (job: string) => new Set([...server.nodes.allocations(gpuNode.ID), ...server.nodes.allocations(defaultNode.ID)].filter((alloc) => alloc.JobID === job).map((alloc) => alloc.NodeID));
    expect(nodesOf("on-gpu")).toEqual(new Set([gpuNode.ID]));
    expect(nodesOf("on-default")).toEqual(new Set([defaultNode.ID]));
    expect(nodesOf("anywhere")).toEqual(new Set([gpuNode.ID, defaultNode.ID]));

    const jobsOf = async (path: string) => (await call<JobListStub[]>("GET", path)).body.map((job) => [job.ID, job.NodePool]);
    expect(await jobsOf("/v1/node/pool/gpu/jobs")).toEqual([["on-gpu", "gpu"]]);
    expect(await jobsOf("/v1/node/pool/all/jobs")).toEqual([["anywhere", "all"]]);
    expect(await jobsOf("/v1/node/pool/gpu/jobs?namespace=elsewhere")).toEqual([]);

    // A pool with no nodes: the job registers and waits for one.
    expect((await call("PUT", "/v1/jobs", { Job: { ...testJob("on-prod"), NodePool: "prod" } })).status).toBe(200);
    expect(nodesOf("on-prod").size).toBe(0);
  });

  test("a pool with a node or a live job is not deleted; an unused one is", async () => {
    expect(await call("DELETE", "/v1/node/pool/gpu")).toMatchObject({ status: 400, error: 'node pool "gpu" has non-terminal jobs; node pool "gpu" has nodes' });
    expect(await call("DELETE", "/v1/node/pool/prod")).toMatchObject({ status: 400, error: 'node pool "prod" has non-terminal jobs' });
    await call("DELETE", "/v1/job/on-prod?purge=true");
    expect((await call("DELETE", "/v1/node/pool/prod")).status).toBe(200);
    expect((await call("GET", "/v1/node/pool/prod")).status).toBe(404);
    expect((await call("DELETE", "/v1/node/pool/prod")).status).toBe(404);
    expect((await call("PUT", "/v1/node/pools", { Name: "spare", Description: "kept" })).status).toBe(200);
  });

  test("pools and the nodes in them survive a restart", async () => {
    server.close();
    const reopened = Server.open({ dataDir, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12 });
    try {
      const again = client(reopened);
      expect((await again<NodePool[]>("GET", "/v1/node/pools")).body.map((pool) => pool.Name)).toEqual(["all", "default", "gpu", "spare"]);
      expect((await again<NodePool>("GET", "/v1/node/pool/spare")).body).toMatchObject({ Description: "kept" });
      expect((await again<NodeListStub[]>("GET", "/v1/node/pool/gpu/nodes")).body.map((node) => node.Name)).toEqual(["in-gpu"]);
    } finally {
      reopened.close();
    }
  });
});

describe("node pools with ACLs", async () => {
  const { server } = openTestServer();
  server.nodes.upsert(testNode({ NodePool: "gpu" }));
  const root = client(server, { token: server.acl.bootstrap().SecretID });
  await server.acl.upsertPolicy({ Name: "reader", Description: "", Rules: 'node { policy = "read" }\nnamespace "default" { policy = "read" }' });
  const reader = client(server, { token: server.acl.upsertToken({ AccessorID: "", Name: "r", Type: "client", Policies: ["reader"], Global: false, ExpirationTTL: 0 }).SecretID });
  const anonymous = client(server, { token: "" });

  test("reads need node:read (jobs also list-jobs); writes and deletes a management token", async () => {
    expect((await anonymous("GET", "/v1/node/pools")).status).toBe(403);
    expect((await reader<NodePool[]>("GET", "/v1/node/pools")).body.map((pool) => pool.Name)).toEqual(["all", "default", "gpu"]);
    expect((await reader("GET", "/v1/node/pool/gpu/nodes")).status).toBe(200);
    expect((await reader("GET", "/v1/node/pool/gpu/jobs")).status).toBe(200);
    expect((await reader("PUT", "/v1/node/pools", { Name: "prod" })).status).toBe(403);
    expect((await reader("DELETE", "/v1/node/pool/gpu")).status).toBe(403);
    expect((await root("PUT", "/v1/node/pools", { Name: "prod" })).status).toBe(200);
    expect((await root("DELETE", "/v1/node/pool/prod")).status).toBe(200);
  });
});
