/**
 * Nomad 0.12's own jobspec fixtures (fixtures/nomad-0.12/README.md): every
 * file Nomad's parser accepts parses on drover into exactly the job Nomad's
 * parser makes of it, survives the API round trip (parse, register, read)
 * unchanged, and every file Nomad refuses gets a 400 naming the problem.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { parseJobHcl, parseJobJson } from "../../src/jobspec/index.ts";
import type { Job } from "../../src/structs/job.ts";
import { openTestServer, testNode } from "../server/fixtures.ts";

const DIR = join(import.meta.dir, "fixtures/nomad-0.12");
const read = (...parts: string[]) => readFileSync(join(DIR, ...parts), "utf8");
const files = readdirSync(join(DIR, "hcl")).filter((name) => name.endsWith(".hcl")).sort();
const accepted = files.filter((name) => existsSync(join(DIR, "nomad-json", `${name}.json`)));

/** The files Nomad 0.12's parser refuses, and what it says (parse_test.go). */
const REFUSED: Record<string, RegExp> = {
  "bad-artifact.hcl": /:9,9: job\.group\["binsl"\]\.task\["binstore"\]\.artifact\.bad: unknown attribute$/,
  "bad-ports.hcl": /port\[\d\]\.label: must be letters, digits, underscores or dashes/,
  "basic_wrong_key.hcl": /:71,11: job\.group\["binsl"\]\.task\["binstore"\]\.service\.check\.nterval: unknown attribute$/,
  "multi-network.hcl": /only one "network" block is allowed/,
  "multi-resource.hcl": /only one "ephemeral_disk" block is allowed/,
  "multi-vault.hcl": /only one "vault" block is allowed/,
  "overlapping-ports.hcl": /port label collision: "http"/,
  "service-check-bad-header.hcl": /header\["Authorization"\]: expected Array/,
  "service-check-bad-header-2.hcl": /header\["Authorization"\]\[1\]: expected string, got 840/,
  "tg-scaling-policy-missing-max.hcl": /scaling: missing "max"/,
  "tg-scaling-policy-multi-policy.hcl": /only one "policy" block is allowed/,
};

/** Accepted files in HCL1-only syntax: HCL2 reads Nomad's own rewrite of them, and names the line of the original. */
const HCL1_ONLY: Record<string, RegExp> = {
  "tg-scaling-policy.hcl": /^tg-scaling-policy\.hcl:12,14: Invalid expression/,
  "tg-service-proxy-expose.hcl": /^tg-service-proxy-expose\.hcl:17,15: Attribute redefined/,
};

const hclOf = (name: string) => (name in HCL1_ONLY ? read("hcl2-adjusted", name) : read("hcl", name));

test("the fixtures are Nomad's 49, 38 of them accepted by its parser", () => {
  expect(files).toHaveLength(49);
  expect(accepted).toHaveLength(38);
  expect(files.filter((name) => !accepted.includes(name)).sort()).toEqual(Object.keys(REFUSED).sort());
});

describe("files Nomad's parser accepts", () => {
  for (const name of accepted) {
    test(`${name}: the same job Nomad's parser makes, with Nomad's defaults`, async () => {
      const ours = await parseJobHcl(name, hclOf(name), { validate: false });
      const nomads = parseJobJson(`${name}.json`, read("nomad-json", `${name}.json`), { validate: false });
      expect(ours).toEqual(nomads);
      // The parsed job is its own JSON: read back, nothing changes.
      expect(parseJobJson("again.json", JSON.stringify({ Job: ours }), { validate: false })).toEqual(ours);
    });
  }
});

describe("files Nomad's parser refuses", () => {
  for (const [name, message] of Object.entries(REFUSED)) {
    test(`${name}: refused, naming the problem`, async () => {
      const error = await parseJobHcl(name, read("hcl", name), { validate: false }).then(
        () => undefined,
        (err: unknown) => err as Error,
      );
      expect(error?.message).toMatch(message);
    });
  }

  for (const [name, message] of Object.entries(HCL1_ONLY)) {
    test(`${name} as Nomad 0.12 wrote it: HCL1-only syntax is named with its line`, async () => {
      const error = await parseJobHcl(name, read("hcl", name), { validate: false }).catch((err: unknown) => err as Error);
      expect((error as Error).message).toMatch(message);
    });
  }
});

describe("through the API", () => {
  const { server } = openTestServer({ freeBytes: () => 1e12 });
  server.nodes.upsert(testNode());
  const app = createApp(pino({ level: "silent" }), serverRoutes(server));
  /** A success's JSON body; an error's plain-text message (Nomad's error shape) as `error`. */
  const send = async <T>(method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return res.ok ? { status: res.status, body: (await res.json()) as T, error: "" } : { status: res.status, body: undefined as T, error: await res.text() };
  };

  test("POST /v1/jobs/parse answers 200 for each accepted file and 400 naming the problem for each refused one", async () => {
    for (const name of accepted) {
      const res = await send<Job>("POST", "/v1/jobs/parse", { JobHCL: hclOf(name) });
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
    }
    for (const [name, message] of Object.entries(REFUSED)) {
      const res = await send("POST", "/v1/jobs/parse", { JobHCL: read("hcl", name) });
      expect({ name, status: res.status }).toEqual({ name, status: 400 });
      expect(res.error).toMatch(message);
    }
  });

  test("a parsed job registers and reads back unchanged, blocks drover does not run included", async () => {
    const parsed = await send<Job>("POST", "/v1/jobs/parse", { JobHCL: read("hcl", "tg-network.hcl") });
    const registered = await send("POST", "/v1/jobs", { Job: parsed.body });
    expect(registered.status).toBe(200);
    const stored = await send<Job>("GET", `/v1/job/${parsed.body.ID}`);
    const serverSet = ["Status", "StatusDescription", "Version", "SubmitTime", "CreateIndex", "ModifyIndex", "JobModifyIndex", "Stable"];
    const strip = (job: Job) => Object.fromEntries(Object.entries(job).filter(([key]) => !serverSet.includes(key)));
    expect(strip(stored.body)).toEqual(strip(parsed.body));
    expect(stored.body.TaskGroups[0]!.Services[0]!.Connect).not.toBeNull();
  });

  test("a driver the node lacks is a placement failure that names it", async () => {
    const parsed = await send<Job>("POST", "/v1/jobs/parse", { JobHCL: read("hcl", "job-with-kill-signal.hcl") });
    expect((await send("POST", "/v1/jobs", { Job: { ...parsed.body, ID: "docker" } })).status).toBe(200);
    const evals = await send<{ FailedTGAllocs: Record<string, { ConstraintFiltered: Record<string, number> }> | null }[]>("GET", "/v1/job/docker/evaluations");
    const failed = evals.body.flatMap((evaluation) => Object.values(evaluation.FailedTGAllocs ?? {}));
    expect(failed.flatMap((metric) => Object.keys(metric.ConstraintFiltered ?? {}))).toContain('missing driver "docker"');
  });
});
