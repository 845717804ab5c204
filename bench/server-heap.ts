/**
 * What a finished dispatched job costs the embedded server's heap: a
 * parameterized batch job dispatched N times in-process, each child's alloc
 * reported running then complete (as the client would), then the heap after
 * a full collection, per job. The same steps with finished groups kept in
 * memory (ServerOptions.keepFinishedInMemory, the behaviour before they moved
 * to SQLite) run in the same process as the peer.
 *
 *   bun bench/server-heap.ts [N]      (default 2000)
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Server } from "../src/server/server.ts";
import { testJob, testNode } from "../test/server/fixtures.ts";
import { machineLine, printTable } from "./lib.ts";

const N = Number(process.argv[2] ?? 2000);
/** Dispatches before the measured ones: one-time costs (code compiled, tables' first growth) are not counted per job. */
const WARMUP = 50;
const KIB = 1024;

function heapUsed(): number {
  Bun.gc(true);
  return process.memoryUsage().heapUsed;
}

function measure(keepFinishedInMemory: boolean) {
  const dataDir = mkdtempSync(join(tmpdir(), "drover-server-heap-"));
  const server = Server.open({ dataDir, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12, keepFinishedInMemory });
  try {
    const node = testNode();
    server.nodes.upsert(node);
    server.jobs.register({ ...testJob("param", { type: "batch" }), ParameterizedJob: { Payload: "optional", MetaRequired: [], MetaOptional: ["n"] } });
    const dispatch = (n: number) => {
      const { DispatchedJobID } = server.jobs.dispatch("param", { Payload: null, Meta: { n: String(n) } });
      const allocs = server.nodes.liveAllocations(node.ID).filter((alloc) => alloc.JobID === DispatchedJobID);
      server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "running" })));
      server.allocs.updateFromClient(allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "complete" })));
    };
    for (let n = 0; n < WARMUP; n++) dispatch(n);
    const before = heapUsed();
    const started = performance.now();
    for (let n = 0; n < N; n++) dispatch(n);
    const ms = performance.now() - started;
    const after = heapUsed();
    const listStarted = performance.now();
    server.allocs.list();
    const listMs = performance.now() - listStarted;
    return { perJob: (after - before) / N, msPerDispatch: ms / N, listMs, tiers: server.stateTiers };
  } finally {
    server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const kept = measure(true);
const tiered = measure(false);
printTable(
  `the server's heap per finished dispatched job (${N} jobs, each kept until job_gc_threshold)`,
  ["finished groups", "KiB per job", "MiB per job", "ms per dispatch + 2 reports", `GET allocations of ${N + WARMUP} (ms)`, "allocs in memory / only in SQLite"],
  [
    ["in memory (before)", kept.perJob / KIB, (kept.perJob / KIB / KIB).toFixed(4), kept.msPerDispatch, kept.listMs, `${kept.tiers.allocs.inMemory} / ${kept.tiers.allocs.onlyStored}`],
    ["only in SQLite (now)", tiered.perJob / KIB, (tiered.perJob / KIB / KIB).toFixed(4), tiered.msPerDispatch, tiered.listMs, `${tiered.tiers.allocs.inMemory} / ${tiered.tiers.allocs.onlyStored}`],
  ],
);
console.log(machineLine());
