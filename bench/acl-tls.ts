/**
 * What ACLs and TLS add to a request: GET /v1/allocations against four
 * compiled agents started in the same run, each with the same job, the same
 * way: plain (the floor), ACLs on (a client token with a read policy), TLS
 * on, both on. Requests go round-robin across the agents, in a new random
 * order each round, so drift in the machine's load falls on all four alike; each agent is asked over one
 * keep-alive connection (what an API client does), and, for the TLS agents,
 * also over a new connection per request (a CLI command's handshake).
 *
 *   bun bench/acl-tls.ts [requests per agent]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeCertsIn, opensslMissing } from "../test/helpers/tls.ts";
import { benchAgent, machineLine, median, percentile, printTable, type BenchAgent } from "./lib.ts";

const REQUESTS = Number(process.argv[2] ?? 3000);
/** Requests per agent before measuring, so the JIT, the token cache and the connections are warm. */
const WARMUP = 300;
/** Allocations each agent lists: a small cluster's worth, so the answer is not trivially short. */
const ALLOCS = 8;
/** Requests over a new connection each, per TLS agent: handshakes are slow, fewer are enough. */
const NEW_CONNECTIONS = 300;

if (opensslMissing) {
  console.error(`bench/acl-tls.ts: ${opensslMissing}`);
  process.exit(1);
}

const certDir = mkdtempSync(join(tmpdir(), "drover-bench-certs-"));
const certs = makeCertsIn(certDir);
const ca = readFileSync(certs.ca, "utf8");
const tlsBlock = { http: true, cert_file: certs.serverCert, key_file: certs.serverKey };

interface Variant {
  name: string;
  agent: BenchAgent;
  acl: boolean;
  tls: boolean;
  token?: string;
}

const JOB = {
  Job: {
    ID: "bench",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "g",
        Count: ALLOCS,
        Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["3600"] }, Resources: { CPU: 10, MemoryMB: 16 } }],
      },
    ],
  },
};

const variants: Variant[] = [];
try {
  for (const [name, acl, tls] of [
    ["plain (floor)", false, false],
    ["ACLs", true, false],
    ["TLS", false, true],
    ["ACLs + TLS", true, true],
  ] as const) {
    const agent = await benchAgent("drover-bench-acl-tls-", {}, { ...(acl ? { acl: { enabled: true } } : {}), ...(tls ? { tls: tlsBlock } : {}) });
    variants.push({ name, agent, acl, tls });
    await agent.start();
  }
  for (const variant of variants) await prepare(variant);

  const keepAlive = new Map<Variant, number[]>(variants.map((variant) => [variant, []]));
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    for (const variant of shuffled(variants)) {
      const ms = await timedGet(variant, true);
      if (i >= WARMUP) keepAlive.get(variant)!.push(ms);
    }
  }
  const fresh = new Map<Variant, number[]>(variants.filter((variant) => variant.tls).map((variant) => [variant, []]));
  for (let i = 0; i < NEW_CONNECTIONS; i++) for (const [variant, times] of fresh) times.push(await timedGet(variant, false));

  const floor = median(keepAlive.get(variants[0]!)!);
  printTable(
    `GET /v1/allocations (${ALLOCS} allocs), ${REQUESTS} sequential requests per agent over one keep-alive connection, round-robin in random order`,
    ["agent", "p50 ms", "p90 ms", "p99 ms", "added at p50"],
    variants.map((variant) => {
      const times = keepAlive.get(variant)!;
      const p50 = median(times);
      return [variant.name, p50, percentile(times, 90), percentile(times, 99), variant === variants[0] ? "—" : `${(((p50 - floor) / floor) * 100).toFixed(1)} %`];
    }),
  );
  printTable(
    `The same over a new connection per request (${NEW_CONNECTIONS} each: TCP and the TLS handshake every time)`,
    ["agent", "p50 ms", "p99 ms"],
    [...fresh].map(([variant, times]) => [variant.name, median(times), percentile(times, 99)]),
  );
  console.log(machineLine());
} finally {
  for (const variant of variants) await variant.agent.cleanUp();
  rmSync(certDir, { recursive: true, force: true });
}

/** Bootstraps ACLs (a client token with a read policy is what's measured), then runs the job until every alloc runs. */
async function prepare(variant: Variant): Promise<void> {
  let root: string | undefined;
  const ok = async (response: Promise<Response>) => {
    const answer = await response;
    if (!answer.ok) throw new Error(`${variant.name}: ${answer.status} ${await answer.text()}`);
    return answer;
  };
  if (variant.acl) {
    root = ((await (await ok(call(variant, "PUT", "/v1/acl/bootstrap"))).json()) as { SecretID: string }).SecretID;
    await ok(call(variant, "PUT", "/v1/acl/policy/reader", { Name: "reader", Rules: 'namespace "default" { policy = "read" }' }, root));
    const token = await ok(call(variant, "PUT", "/v1/acl/token", { Name: "bench", Type: "client", Policies: ["reader"] }, root));
    variant.token = ((await token.json()) as { SecretID: string }).SecretID;
  }
  await ok(call(variant, "PUT", "/v1/jobs", JOB, root));
  for (;;) {
    const allocs = (await (await ok(call(variant, "GET", "/v1/job/bench/allocations", undefined, root))).json()) as { ClientStatus: string }[];
    if (allocs.filter((alloc) => alloc.ClientStatus === "running").length === ALLOCS) return;
    await Bun.sleep(100);
  }
}

function call(variant: Variant, method: string, path: string, body?: unknown, token = variant.token, keepAlive = true): Promise<Response> {
  return fetch(`${variant.agent.address}${path}`, {
    method,
    keepalive: keepAlive,
    headers: { ...(token ? { "X-Nomad-Token": token } : {}), ...(keepAlive ? {} : { Connection: "close" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(variant.tls ? { tls: { ca } } : {}),
  });
}

function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function timedGet(variant: Variant, keepAlive: boolean): Promise<number> {
  const start = performance.now();
  const response = await call(variant, "GET", "/v1/allocations", undefined, variant.token, keepAlive);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${variant.name}: GET /v1/allocations answered ${response.status}`);
  return performance.now() - start;
}
