/**
 * Job bodies an attacker or a broken script might send: each is a 400 that
 * names the field, is answered at once (the huge counts used to hold the
 * agent's one thread), and stores nothing.
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { createApp, MAX_BODY_BYTES } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { openTestServer, testJob as anyJob, testNode } from "../server/fixtures.ts";

const { server } = openTestServer();
server.nodes.upsert(testNode());
const app = createApp(pino({ level: "silent" }), serverRoutes(server));

type Job = { TaskGroups: { Tasks: { Resources: object }[] }[] } & Record<string, unknown>;
const testJob = (id: string) => anyJob(id) as Job;
const withGroup = (job: Job, change: Record<string, unknown>): Job => ({ ...job, TaskGroups: [{ ...job.TaskGroups[0]!, ...change }] }) as Job;
const withTask = (job: Job, change: Record<string, unknown>): Job =>
  withGroup(job, { Tasks: [{ ...job.TaskGroups[0]!.Tasks[0]!, ...change }] });
const withResources = (job: Job, change: Record<string, unknown>): Job =>
  withTask(job, { Resources: { ...job.TaskGroups[0]!.Tasks[0]!.Resources, ...change } });

const CASES: [string, Job, RegExp][] = [
  ["a count of a billion", withGroup(testJob("count"), { Count: 1_000_000_000 }), /TaskGroups\["web"\]\.Count: must be at most 10000 \(got 1000000000\)/],
  ["a count of 2^63", withGroup(testJob("count63"), { Count: 2 ** 63 }), /Count: must be at most 10000/],
  ["a job ID with '/'", testJob("a/b"), /Job\.ID: must not contain '\/'/],
  ["a job ID that climbs out", testJob("../../etc"), /Job\.ID: must not contain '\/'/],
  ["a job ID of a megabyte", testJob("x".repeat(1 << 20)), /Job\.ID: must be at most 128 characters/],
  ["a job ID with a bidi override", testJob("evil\u202Etxt"), /Job\.ID: must not contain control or invisible characters \(found U\+202E\)/],
  ["a job ID with a control character", testJob("bell\u0007"), /Job\.ID: must not contain control or invisible characters \(found U\+0007\)/],
  ["a user with a NUL", withTask(testJob("user"), { User: "root\u0000" }), /User: must not contain control or invisible characters \(found U\+0000\)/],
  ["env given as a list", withTask(testJob("envlist"), { Env: ["A=1"] }), /Env: expected an object of strings/],
  ["an env name with NUL", withTask(testJob("envnul"), { Env: { "A\u0000B": "1" } }), /variable names must not contain NUL/],
  ["an env name with '='", withTask(testJob("enveq"), { Env: { "A=B": "1" } }), /variable name "A=B" must not contain '='/],
  ["memory of a petabyte", withResources(testJob("mem"), { MemoryMB: 1e12 }), /Resources\.MemoryMB: must be at most 16777216 MB/],
  ["a task named ..", withTask(testJob("dots"), { Name: ".." }), /Name: must not be "\.\."/],
];

describe("hostile job bodies", () => {
  for (const [what, job, message] of CASES) {
    test(`${what}: 400 naming the field, nothing stored`, async () => {
      const before = server.index;
      const res = await app.request("/v1/jobs", { method: "POST", body: JSON.stringify({ Job: job }) });
      expect(res.status).toBe(400);
      expect(await res.text()).toMatch(message);
      expect(server.index).toBe(before);
      expect(server.jobs.list()).toHaveLength(0);
    });
  }
});

describe("hostile request bodies", () => {
  test("a body over the limit is a 413 before it is read; nothing stored", async () => {
    const before = server.index;
    const padding = "x".repeat(MAX_BODY_BYTES);
    const res = await app.request("/v1/jobs", { method: "POST", body: JSON.stringify({ Job: { ...testJob("huge"), Meta: { padding } } }) });
    expect(res.status).toBe(413);
    expect(await res.text()).toBe(`request body is larger than ${MAX_BODY_BYTES} bytes`);
    expect(server.index).toBe(before);
  });

  test("JSON nested a million levels deep is a 400", async () => {
    const depth = 1_000_000;
    const res = await app.request("/v1/jobs", { method: "POST", body: `{"Job":${"[".repeat(depth)}${"]".repeat(depth)}}` });
    expect(res.status).toBe(400);
  });
});

describe("hostile scale requests", () => {
  test("a scale past the count limits is a 400 naming the limit; nothing stored", async () => {
    server.jobs.register(testJob("scaled"));
    const before = server.index;
    const scale = (Count: number) => app.request("/v1/job/scaled/scale", { method: "PUT", body: JSON.stringify({ Count, Target: { Group: "web" } }) });
    const res = await scale(1_000_000_000);
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/TaskGroups\["web"\]\.Count: must be at most 10000 \(got 1000000000\)/);
    expect(server.index).toBe(before);
    expect(server.jobs.get("scaled").TaskGroups[0]!.Count).toBe(1);
    server.jobs.deregister("scaled", true);
  });
});
