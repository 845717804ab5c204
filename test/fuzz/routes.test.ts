/**
 * Property-based fuzzing (fast-check) of every route the agent serves: path
 * parameters, query parameters and bodies drawn from values a broken client
 * or an attacker sends. The answer is never a 5xx, and a request that is
 * refused (4xx) moves no table's index: it changed nothing. A streaming
 * answer (a followed log, the monitor, the event stream) is cut after its
 * first chunk.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import * as v from "valibot";
import { Agent } from "../../src/agent/agent.ts";
import { prepareDataDir } from "../../src/agent/data-dir.ts";
import { fingerprint } from "../../src/client/fingerprint/index.ts";
import { AgentConfigSchema } from "../../src/config/schema.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { openClientState } from "../../src/state/client/db.ts";
import { DiskReserve } from "../../src/state/reserve.ts";
import { testCgroupParent } from "../helpers/cgroups.ts";
import { freePort, tempDir } from "../helpers/index.ts";

/** Requests per route: a few dozen each across ~100 routes keeps the file under a minute. */
const RUNS_PER_ROUTE = 12;
/** A streaming answer is read for this long, then cut. */
const STREAM_READ_MS = 300;

/** Tables whose X-Nomad-Index moves on any write. */
const INDEXED = ["/v1/jobs", "/v1/allocations", "/v1/evaluations", "/v1/nodes"];

/** Query parameters Nomad's endpoints read, each with hostile values. */
const QUERY_NAMES = [
  "index", "wait", "prefix", "task", "type", "origin", "offset", "limit", "follow", "plain", "purge", "path",
  "region", "namespace", "stale", "topic", "log_level", "log_json", "diff", "all", "resources", "verbose", "token", "command", "tty",
] as const;

const hostileText = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("", "..", "../../etc/passwd", "%00", "\u0000", "\u202E", "-1", "1e400", "9".repeat(40), "true", "null", "[]", "{}", "secrets/x", "x".repeat(4000)),
);

const hostileBody = fc.oneof(
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.string({ unit: "binary", maxLength: 100 }),
  fc.constantFrom("{", "null", "[]", '{"Job":null}', '{"Task":"x","Cmd":[]}'),
);

// Made at the top level: bun runs an afterAll registered inside beforeAll as soon as beforeAll ends.
const dataDirPath = tempDir("drover-fuzz-routes-");
const cgroupParent = testCgroupParent();
let agent: Agent;
let address = "";

beforeAll(async () => {
  const port = await freePort();
  const config = v.parse(AgentConfigSchema, {
    data_dir: dataDirPath,
    ports: { http: port },
    log_level: "ERROR",
    client: { cgroup_parent: cgroupParent },
  });
  const dataDir = prepareDataDir(config, false);
  agent = new Agent({
    config,
    overrides: { dev: false, configPaths: [] },
    dataDir,
    // The agent's own logger (the monitor taps it), printing only errors.
    logger: await createLogger({ level: "ERROR", json: true }),
    state: openClientState(dataDir.clientDir),
    reserve: new DiskReserve(dataDir.root),
    node: fingerprint(config, dataDir.clientDir, dataDir.allocDir),
  });
  await agent.start();
  address = `http://127.0.0.1:${port}`;
  // No fuzzed request may start a task: the one node takes no placements.
  const [node] = (await (await fetch(`${address}/v1/nodes`)).json()) as { ID: string }[];
  const eligibility = await fetch(`${address}/v1/node/${node!.ID}/eligibility`, { method: "PUT", body: JSON.stringify({ NodeID: node!.ID, Eligibility: "ineligible" }) });
  expect(eligibility.status).toBe(200);
});

afterAll(async () => {
  await agent?.shutdown();
});

async function indexes(): Promise<number[]> {
  return Promise.all(INDEXED.map(async (path) => Number((await fetch(`${address}${path}`)).headers.get("X-Nomad-Index"))));
}

/**
 * The answer's status, having read (a little of) its body so nothing is left
 * open; 0 when no answer came in time: a blocking query (?index=&wait=) may
 * rightly hold its answer for minutes, and that is not a failure.
 */
async function send(method: string, url: string, body: string | undefined): Promise<number> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), STREAM_READ_MS);
  try {
    const res = await fetch(url, { method, ...(body !== undefined && method !== "GET" ? { body } : {}), signal: abort.signal });
    await res.arrayBuffer().catch(() => undefined);
    return res.status;
  } catch {
    return 0;
  } finally {
    clearTimeout(timer);
  }
}

describe("every route", () => {
  test("hostile path parameters, query parameters and bodies: never a 5xx; a refusal changes nothing", async () => {
    const routes = agent.routes.filter((route) => route.method !== "ALL" && route.path.startsWith("/v1/"));
    expect(routes.length).toBeGreaterThan(50);
    const failures: string[] = [];
    for (const route of routes) {
      await fc.assert(
        fc.asyncProperty(
          fc.array(hostileText, { minLength: 4, maxLength: 4 }),
          fc.dictionary(fc.constantFrom(...QUERY_NAMES), hostileText, { maxKeys: 4 }),
          hostileBody,
          async (params, query, body) => {
            let i = 0;
            const path = route.path.replace(/:[a-zA-Z_]+/g, () => encodeURIComponent(params[i++ % params.length]!));
            const search = new URLSearchParams(query).toString();
            const url = `${address}${path}${search ? `?${search}` : ""}`;
            const before = await indexes();
            const status = await send(route.method, url, body);
            if (status >= 500) failures.push(`${route.method} ${url.slice(0, 200)} -> ${status}`);
            if (status >= 400 && status < 500) expect({ url, after: await indexes() }).toEqual({ url, after: before });
          },
        ),
        { numRuns: RUNS_PER_ROUTE },
      );
    }
    expect(failures).toEqual([]);
  });
});
