/**
 * Property-based fuzzing of job input (fast-check): job JSON through the
 * API and the parser, and HCL job files. Whatever the input, the answer is a
 * 2xx or a 4xx naming the problem, never a 5xx or a hang, and a refused
 * input changes nothing; a valid generated job round-trips unchanged.
 * Each property runs a bounded number of cases so the suite stays under a
 * minute; a failure prints fast-check's seed and the shrunk input.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { parseJobHcl, parseJobJson } from "../../src/jobspec/index.ts";
import { HclSyntaxError } from "../../src/lib/hcl.ts";
import { ValidationError } from "../../src/lib/validation.ts";
import { openTestServer, testJob, testNode } from "../server/fixtures.ts";

/** Cases per property: enough to walk every field several times, few enough for the suite's minute. */
const RUNS = 150;

const { server } = openTestServer();
server.nodes.upsert(testNode());
// Errors are printed: a 5xx this suite finds must say why.
const app = createApp(pino({ level: "error" }), serverRoutes(server));

async function post(path: string, body: string): Promise<{ status: number; text: string }> {
  const res = await app.request(path, { method: "POST", body });
  return { status: res.status, text: await res.text() };
}

/** Every path to a value inside `value`, e.g. ["TaskGroups", 0, "Count"]. */
function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) return [prefix, ...value.flatMap((item, i) => paths(item, [...prefix, i]))];
  if (typeof value === "object" && value !== null) return [prefix, ...Object.entries(value).flatMap(([key, item]) => paths(item, [...prefix, key]))];
  return [prefix];
}

function setAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy: Record<string | number, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
  (copy as Record<string | number, unknown>)[head!] = setAt((value as Record<string | number, unknown>)[head!], rest, replacement);
  return copy;
}

/** Values a broken client or an attacker sends where a field is expected. */
const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(null, -1, 2 ** 63, 1e308, -0, "", "\u0000", "a/b", "..", "\u202E", "x".repeat(5000), [], {}, [[[[[]]]]], true),
  fc.string({ unit: "binary", maxLength: 40 }),
);

const base = testJob("fuzz-base", { count: 1 });
const basePaths = paths(base).filter((path) => path.length > 0);

describe("job JSON through POST /v1/jobs", () => {
  test("a valid job with one field replaced by anything: 200 or a 4xx naming a field; a refusal stores nothing", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...basePaths), hostileValue, fc.integer({ min: 0, max: 1e6 }), async (path, value, n) => {
        const job = { ...(setAt(base, path, value) as Record<string, unknown>), ID: `fuzz-${n}` };
        const before = server.index;
        const res = await post("/v1/jobs", JSON.stringify({ Job: job }));
        expect(res.status).not.toBeGreaterThanOrEqual(500);
        if (res.status >= 400) {
          expect(res.text.length).toBeGreaterThan(0);
          expect(server.index).toBe(before);
        }
      }),
      { numRuns: RUNS },
    );
  });

  test("any JSON value as a body, or as the Job, is a 4xx (or a 200 for a valid job), never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), fc.boolean(), async (value, wrap) => {
        const before = server.index;
        const res = await post("/v1/jobs", JSON.stringify(wrap ? { Job: value } : value));
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(server.index).toBe(before);
      }),
      { numRuns: RUNS },
    );
  });

  test("bodies that are not JSON at all: 400", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 200 }), async (text) => {
        fc.pre(!isJson(text));
        const res = await post("/v1/jobs", text);
        expect(res.status).toBe(400);
      }),
      { numRuns: RUNS },
    );
  });
});

/** Jobs drover accepts, with the fields an operator most often sets drawn at random. */
const validJob = fc
  .record({
    id: fc.stringMatching(/^[a-z][a-z0-9_-]{0,30}$/),
    count: fc.integer({ min: 0, max: 5 }),
    cpu: fc.integer({ min: 1, max: 4000 }),
    memory: fc.integer({ min: 10, max: 4000 }),
    meta: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
    env: fc.dictionary(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,10}$/), fc.string({ maxLength: 20 }).filter((text) => !text.includes("\0")), { maxKeys: 3 }),
  })
  .map(({ id, count, cpu, memory, meta, env }) => {
    const job = testJob(id, { count, cpu, memory, meta });
    const group = (job.TaskGroups as Record<string, unknown>[])[0]!;
    const task = (group.Tasks as Record<string, unknown>[])[0]!;
    task.Env = env;
    return job;
  });

describe("valid jobs", () => {
  test("round-trip: what GET /v1/job/:id answers is what parsing the same JSON gives", async () => {
    await fc.assert(
      fc.asyncProperty(validJob, async (job) => {
        const id = `rt-${job.ID as string}`;
        const body = JSON.stringify({ Job: { ...job, ID: id } });
        const res = await post("/v1/jobs", body);
        expect(res.status).toBe(200);
        const parsed = parseJobJson("job.json", body);
        const stored = (await (await app.request(`/v1/job/${id}`)).json()) as Record<string, unknown>;
        for (const key of ["TaskGroups", "Meta", "Type", "Datacenters", "Priority"] as const) expect(stored[key]).toEqual(parsed[key]);
      }),
      { numRuns: 40 },
    );
  });
});

describe("HCL job files", () => {
  const VALID = `job "web" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n`;

  /** Bytes, and the escapes and template openers that reach the parser's less travelled paths. */
  const hclInsert = fc.oneof(fc.string({ unit: "binary-ascii", maxLength: 8 }), fc.constantFrom("\\u0000", "\\t", "\\u202e", "${", "%{", '"', "}", "{", "<<EOF\n"));

  test("a valid file with characters inserted or removed: a syntax or validation error, or a job; nothing else", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: VALID.length }), fc.integer({ min: 0, max: 5 }), hclInsert, async (at, drop, insert) => {
        const text = VALID.slice(0, at) + insert + VALID.slice(at + drop);
        try {
          await parseJobHcl("fuzz.hcl", text);
        } catch (err) {
          expect(err instanceof HclSyntaxError || err instanceof ValidationError).toBe(true);
          expect((err as Error).message).toStartWith("fuzz.hcl");
        }
      }),
      { numRuns: RUNS },
    );
  });

  test("arbitrary text: a syntax or validation error naming the file", async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 300 }), async (text) => {
        try {
          await parseJobHcl("any.hcl", text);
        } catch (err) {
          expect(err instanceof HclSyntaxError || err instanceof ValidationError).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  });
});

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

describe("HCL job files with control characters (found by this suite)", () => {
  test("raw, or written as an escape in a block label: a syntax or validation error, with the line where it is known", async () => {
    await expect(parseJobHcl("raw.hcl", 'job "a" {\n  group "g\u0001" {}\n}')).rejects.toThrow("raw.hcl:2,11: control character U+0001 is not allowed in the file");
    for (const escaped of ["\\u0000", "\\t", "\\u0001"]) {
      const error = await parseJobHcl("escaped.hcl", `job "a" {\n  group "g${escaped}" {\n    task "t" {\n      driver = "raw_exec"\n    }\n  }\n}`).catch((err: unknown) => err);
      expect(error instanceof HclSyntaxError || error instanceof ValidationError).toBe(true);
    }
  });
});
