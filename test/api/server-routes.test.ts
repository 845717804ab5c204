import { describe, expect, test } from "bun:test";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import type { Allocation, AllocListStub } from "../../src/structs/alloc.ts";
import type { Evaluation } from "../../src/structs/evaluation.ts";
import type { Job, JobListStub, JobSummary } from "../../src/structs/job.ts";
import type { Node, NodeListStub } from "../../src/structs/node.ts";
import { sleep } from "../helpers/index.ts";
import { openTestServer, testJob, testNode } from "../server/fixtures.ts";

let free = 1e12;
const { server } = openTestServer({ freeBytes: () => free });
const node = testNode();
server.nodes.upsert(node);
const app = createApp(pino({ level: "silent" }), serverRoutes(server));

/** A success's JSON body; an error's plain-text message (Nomad's error shape) as `error`. */
async function read<T>(res: Response): Promise<{ status: number; body: T; error: string }> {
  if (res.ok) return { status: res.status, body: (await res.json()) as T, error: "" };
  expect(res.headers.get("Content-Type")).toStartWith("text/plain");
  return { status: res.status, body: undefined as T, error: await res.text() };
}
const get = async <T>(path: string) => {
  const res = await app.request(path);
  return { ...(await read<T>(res)), index: Number(res.headers.get("X-Nomad-Index")) };
};
const send = async <T>(method: string, path: string, body?: unknown) =>
  read<T>(await app.request(path, { method, body: typeof body === "string" ? body : JSON.stringify(body) }));

describe("job endpoints", () => {
  test("POST /v1/jobs registers and answers Nomad's fields; GET reads it back", async () => {
    const res = await send<{ EvalID: string; JobModifyIndex: number; Index: number; Warnings: string }>("POST", "/v1/jobs", { Job: testJob("api", { count: 2 }) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ Warnings: "", JobModifyIndex: res.body.Index });
    const job = await get<Job>("/v1/job/api");
    expect(job.body).toMatchObject({ ID: "api", Status: "running", Version: 0 });
    expect(job.index).toBeGreaterThanOrEqual(res.body.Index);
    const list = await get<JobListStub[]>("/v1/jobs?prefix=ap");
    expect(list.body.map((stub) => [stub.ID, stub.JobSummary.Summary.web?.Starting])).toEqual([["api", 2]]);
    const allocs = await get<AllocListStub[]>("/v1/job/api/allocations");
    expect(allocs.body).toHaveLength(2);
    expect(allocs.body[0]).toMatchObject({ JobID: "api", JobVersion: 0, JobType: "service", ClientStatus: "pending" });
    const summary = await get<JobSummary>("/v1/job/api/summary");
    expect(summary.body.Summary.web).toMatchObject({ Starting: 2, Queued: 0 });
    const evals = await get<Evaluation[]>("/v1/job/api/evaluations");
    expect(evals.body[0]).toMatchObject({ ID: res.body.EvalID, Status: "complete", TriggeredBy: "job-register" });
    const versions = await get<{ Versions: Job[] }>("/v1/job/api/versions");
    expect(versions.body.Versions.map((version) => version.Version)).toEqual([0]);
  });

  test("POST /v1/job/:id must name the same job", async () => {
    expect((await send("POST", "/v1/job/other", { Job: testJob("api") })).status).toBe(400);
    expect((await send("POST", "/v1/job/api", { Job: testJob("api", { count: 3 }) })).status).toBe(200);
  });

  test("bad bodies are 400 naming the problem; unknown jobs 404", async () => {
    const malformed = await send("POST", "/v1/jobs", "{not json");
    expect(malformed.status).toBe(400);
    expect(malformed.error).toMatch(/malformed JSON body/);
    const invalid = await send("POST", "/v1/jobs", { Job: { ...testJob("x"), Priority: 500 } });
    expect(invalid).toMatchObject({ status: 400, error: "job: Job.Priority: expected at most 100, got 500" });
    const spread = await send("POST", "/v1/jobs", { Job: { ...testJob("x"), Type: "system", Spreads: [{ Attribute: "${node.datacenter}", Weight: 50, SpreadTarget: null }] } });
    expect(spread).toMatchObject({ status: 400, error: "job: Job.Spreads: system jobs may not have a spread block" });
    expect((await send("POST", "/v1/jobs", { NotAJob: 1 })).status).toBe(400);
    expect(await get("/v1/job/nope")).toMatchObject({ status: 404, error: 'job "nope" not found' });
    // Nomad 1.x: a job that is not there is already deregistered; no evaluation, nothing written.
    const indexBefore = server.index;
    expect(await send("DELETE", "/v1/job/nope")).toMatchObject({ status: 200, body: { EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0 } });
    expect(server.index).toBe(indexBefore);
    expect((await get("/v1/allocation/nope")).status).toBe(404);
    expect((await get("/v1/node/nope")).status).toBe(404);
    expect((await get("/v1/jobs?index=abc")).status).toBe(400);
  });

  test("POST /v1/jobs/parse turns HCL into the job's JSON", async () => {
    const hcl = 'job "p" {\n group "g" {\n task "t" {\n driver = "raw_exec"\n config {\n command = "/bin/true"\n }\n }\n }\n}\n';
    const res = await send<Job>("POST", "/v1/jobs/parse", { JobHCL: hcl });
    expect(res.body).toMatchObject({ ID: "p", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Config: { command: "/bin/true" } }] }] });
    const bad = await send("POST", "/v1/jobs/parse", { JobHCL: 'job "p" {\n nope = 1\n}' });
    expect(bad.status).toBe(400);
    expect(bad.error).toContain('JobHCL:2,2: job.nope: unknown attribute');
    const syntax = await send("POST", "/v1/jobs/parse", { JobHCL: 'job "p" {\n' });
    expect(syntax.status).toBe(400);
    expect(syntax.error).toMatch(/^JobHCL:1,9: Unclosed configuration block/);
  });

  test("POST /v1/jobs/parse evaluates HCL2 with Nomad 1.x's Variables; names the job does not declare are ignored", async () => {
    const hcl = [
      'variable "cmd" {}',
      'locals {\n name = upper(var.cmd)\n}',
      'job "p" {\n group "g" {\n task "t" {\n driver = "raw_exec"',
      ' config {\n command = "/bin/${var.cmd}"\n args = [local.name, "${NOMAD_ALLOC_ID}"]\n }\n }\n }\n}',
    ].join("\n");
    const res = await send<Job>("POST", "/v1/jobs/parse", { JobHCL: hcl, Variables: 'cmd = "true"\nother = 1', Canonicalize: true });
    expect(res.body).toMatchObject({ TaskGroups: [{ Tasks: [{ Config: { command: "/bin/true", args: ["TRUE", "${NOMAD_ALLOC_ID}"] } }] }] });
    const unset = await send("POST", "/v1/jobs/parse", { JobHCL: hcl });
    expect(unset).toMatchObject({ status: 400, error: expect.stringContaining('JobHCL:1,1: variable["cmd"]: unset variable "cmd"') });
    const file = await send("POST", "/v1/jobs/parse", { JobHCL: 'job "p" {\n region = file("/etc/passwd")\n}' });
    expect(file).toMatchObject({ status: 400, error: expect.stringContaining("JobHCL:2,2: job.region: file(): filesystem functions are disabled here") });
    const hcl1 = await send("POST", "/v1/jobs/parse", { JobHCL: hcl, Variables: 'cmd = "true"', HCLv1: true });
    expect(hcl1).toMatchObject({ status: 400, error: expect.stringContaining("Variables: HCL1 job files have no variables") });
    const v1 = await send("POST", "/v1/jobs/parse", { JobHCL: 'job "p" {\n region = upper("x")\n}', HCLv1: true });
    expect(v1).toMatchObject({ status: 400, error: expect.stringContaining('the expression "${upper("x")}" is not supported by drover') });
  });

  test("a full disk is a 507 that registers nothing", async () => {
    free = 0;
    const res = await send("POST", "/v1/jobs", { Job: testJob("nospace") });
    free = 1e12;
    expect(res.status).toBe(507);
    expect(res.error).toMatch(/^cannot register the job: only 0 MB free/);
    expect((await get("/v1/job/nospace")).status).toBe(404);
  });
});

describe("allocation, evaluation and node endpoints", () => {
  test("an allocation comes with its job; stopping it places a replacement", async () => {
    server.jobs.register(testJob("alloc", { count: 1 }));
    const [stub] = (await get<AllocListStub[]>("/v1/job/alloc/allocations")).body;
    const alloc = await get<Allocation>(`/v1/allocation/${stub!.ID}`);
    expect(alloc.body).toMatchObject({ ID: stub!.ID, Job: { ID: "alloc" }, NodeID: node.ID, TaskStates: null });
    const prefixed = await get<AllocListStub[]>(`/v1/allocations?prefix=${stub!.ID.slice(0, 6)}`);
    expect(prefixed.body.map((item) => item.ID)).toContain(stub!.ID);

    const stop = await send<{ EvalID: string; Index: number }>("POST", `/v1/allocation/${stub!.ID}/stop`);
    expect(stop.status).toBe(200);
    const placed = await get<AllocListStub[]>(`/v1/evaluation/${stop.body.EvalID}/allocations`);
    expect(placed.body).toHaveLength(1);
    expect(placed.body[0]).toMatchObject({ PreviousAllocation: stub!.ID });
    expect((await get<Evaluation>(`/v1/evaluation/${stop.body.EvalID}`)).body.TriggeredBy).toBe("alloc-stop");
  });

  test("nodes list and detail", async () => {
    const list = await get<NodeListStub[]>("/v1/nodes");
    expect(list.body).toEqual([expect.objectContaining({ ID: node.ID, Status: "ready", Datacenter: "dc1", Address: "127.0.0.1" })]);
    expect((await get<Node>(`/v1/node/${node.ID}`)).body.NodeResources.Cpu.CpuShares).toBe(4000);
    const allocs = await get<Allocation[]>(`/v1/node/${node.ID}/allocations`);
    expect(allocs.body.length).toBeGreaterThan(0);
    expect(allocs.body[0]!.Job).toBeDefined();
  });

  test("DELETE /v1/job/:id stops, ?purge=true removes, PUT /v1/system/gc collects", async () => {
    server.jobs.register(testJob("old"));
    server.jobs.deregister("old", false);
    const [old] = server.allocs.list().filter((item) => item.JobID === "old");
    server.allocs.updateFromClient([{ ID: old!.ID, ClientStatus: "complete" }]);
    server.jobs.register(testJob("gone"));
    const stop = await send<{ JobModifyIndex: number }>("DELETE", "/v1/job/gone");
    expect((await get<Job>("/v1/job/gone")).body).toMatchObject({ Stop: true, JobModifyIndex: stop.body.JobModifyIndex });
    const refused = await send("DELETE", "/v1/job/gone?purge=yes");
    expect(refused.status).toBe(400);
    expect(refused.error).toBe("purge: must be true or false");
    await send("DELETE", "/v1/job/gone?purge=1");
    expect((await get("/v1/job/gone")).status).toBe(404);
    const [alloc] = server.allocs.list().filter((item) => item.JobID === "gone");
    // A purged job's alloc goes once the client reports it finished.
    server.allocs.updateFromClient([{ ID: alloc!.ID, ClientStatus: "complete" }]);
    expect((await get(`/v1/allocation/${alloc!.ID}`)).status).toBe(404);
    // A stopped job's finished alloc stays for inspection until a GC pass.
    expect((await get(`/v1/allocation/${old!.ID}`)).status).toBe(200);
    const gc = await send<{ allocs: number }>("PUT", "/v1/system/gc");
    expect(gc.body.allocs).toBeGreaterThanOrEqual(1);
    expect((await get(`/v1/allocation/${old!.ID}`)).status).toBe(404);
  });
});

describe("blocking queries", () => {
  test("?index=N waits for a change past N and reports the new X-Nomad-Index", async () => {
    const { index } = await get("/v1/jobs");
    let answered = false;
    const waiting = get<JobListStub[]>(`/v1/jobs?index=${index}&wait=10s`).then((res) => {
      answered = true;
      return res;
    });
    await sleep(50);
    expect(answered).toBe(false);
    server.jobs.register(testJob("blocking"));
    const res = await waiting;
    expect(res.index).toBeGreaterThan(index);
    expect(res.body.map((job) => job.ID)).toContain("blocking");
  });

  test("a wait with nothing new ends after ?wait= with the same index", async () => {
    const { index } = await get("/v1/nodes");
    const res = await get(`/v1/nodes?index=${index}&wait=30ms`);
    expect(res.index).toBe(index);
    expect((await get("/v1/nodes?index=1&wait=forever")).status).toBe(400);
  });
});
