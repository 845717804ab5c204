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
import { jsonText } from "../src/api/json-body.ts";
import { Server } from "../src/server/server.ts";
import { testJob, testNode } from "../test/server/fixtures.ts";
import { machineLine, printTable } from "./lib.ts";

const N = Number(process.argv[2] ?? 2000);
/** Dispatches before the measured ones: one-time costs (code compiled, tables' first growth) are not counted per job. */
const WARMUP = 50;
const KIB = 1024;
/** Each list is read this many times; the median is reported (the first read may fill caches a poll then reuses). */
const LIST_READS = 5;

/** Median milliseconds of `read` answered as the API answers it (the list and its JSON text). */
function listMs(read: () => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < LIST_READS; i++) {
    const started = performance.now();
    jsonText(read());
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(LIST_READS / 2)]!;
}

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
    const lists = {
      jobs: listMs(() => server.jobs.list()),
      allocs: listMs(() => server.allocs.list()),
      evals: listMs(() => server.evals.list()),
      search: listMs(() => server.search.prefixSearch("dispatch", "all")),
      fuzzy: listMs(() => server.fuzzySearch.search({ text: "param", contexts: server.fuzzySearch.contexts("all"), prefix: "", variables: [], visible: () => true })),
      parentSummary: listMs(() => server.jobs.summary("param")),
    };
    // What the lists keep (a finished job's list stub text) counts too.
    const afterLists = heapUsed();
    return { perJob: (after - before) / N, perJobAfterLists: (afterLists - before) / N, msPerDispatch: ms / N, lists, tiers: server.stateTiers };
  } finally {
    server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const kept = measure(true);
const tiered = measure(false);
printTable(
  `the server's heap per finished dispatched job (${N} jobs, each kept until job_gc_threshold)`,
  ["finished groups", "KiB per job", "MiB per job", "KiB per job after the lists below", "ms per dispatch + 2 reports", "allocs in memory / only in SQLite"],
  [kept, tiered].map((run, i) => [
    i === 0 ? "in memory (before)" : "only in SQLite (now)",
    run.perJob / KIB,
    (run.perJob / KIB / KIB).toFixed(4),
    run.perJobAfterLists / KIB,
    run.msPerDispatch,
    `${run.tiers.allocs.inMemory} / ${run.tiers.allocs.onlyStored}`,
  ]),
);
printTable(
  `each list with ${N + WARMUP} finished dispatched jobs, as answered (list and JSON text), median of ${LIST_READS} reads (ms)`,
  ["finished groups", "jobs", "allocations", "evaluations", 'search "dispatch" (all)', 'fuzzy search "param"', "the parent's summary"],
  [kept, tiered].map((run, i) => [i === 0 ? "in memory" : "only in SQLite", run.lists.jobs, run.lists.allocs, run.lists.evals, run.lists.search, run.lists.fuzzy, run.lists.parentSummary]),
);
console.log(machineLine());
