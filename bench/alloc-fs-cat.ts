/**
 * `nomad alloc fs <alloc> <file>` (Nomad 0.12's own CLI) of a 100 MB file in
 * a task's dir, served by a compiled drover agent, beside `cat` of the same
 * file (the floor) and `curl` of drover's /v1/client/fs/cat (the agent alone,
 * without the Nomad CLI), in the same run. Output goes to /dev/null; the file
 * is in the page cache (a first read warms it, not counted). Median of N runs.
 *
 *   bun bench/alloc-fs-cat.ts [runs]
 */
import { join } from "node:path";
import { spawnProcess } from "../src/runtime/spawn.ts";
import { sleep } from "../test/helpers/index.ts";
import { NOMAD_BINARY, nomadMissing } from "../test/helpers/nomad.ts";
import { benchAgent, machineLine, median, printTable } from "./lib.ts";

const RUNS = Number(process.argv[2] ?? 5);
const FILE_BYTES = 100_000_000;
/** How often the agent is asked whether the task has written its file; small next to writing 100 MB. */
const POLL_MS = 50;

if (!NOMAD_BINARY) {
  console.log(`skipped: ${nomadMissing}`);
  process.exit(0);
}

const bench = await benchAgent("drover-bench-fs-");
const { dir, address } = bench;

/** Runs argv with stdout to /dev/null; the wall time in ms, or a throw naming the failure. */
async function timed(argv: string[], env: Record<string, string> = {}): Promise<number> {
  const started = performance.now();
  const child = spawnProcess({ argv, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdout: "ignore", stderr: "pipe" });
  const [status, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  const ms = performance.now() - started;
  if (status.exitCode !== 0) throw new Error(`${argv.join(" ")} failed (${status.exitCode}): ${stderr}`);
  return ms;
}

const agent = await bench.start();
try {
  const job = {
    ID: "bigfile",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "g",
        Tasks: [
          {
            Name: "t",
            Driver: "raw_exec",
            Config: { command: "/bin/sh", args: ["-c", `head -c ${FILE_BYTES} /dev/urandom > "$NOMAD_TASK_DIR/big.tmp" && mv "$NOMAD_TASK_DIR/big.tmp" "$NOMAD_TASK_DIR/big"; exec sleep 600`] },
            Resources: { CPU: 100, MemoryMB: 64 },
          },
        ],
      },
    ],
  };
  const res = await fetch(`${address}/v1/jobs`, { method: "PUT", body: JSON.stringify({ Job: job }) });
  if (!res.ok) throw new Error(`register: ${res.status} ${await res.text()}`);
  let allocId = "";
  for (;;) {
    const allocs = (await (await fetch(`${address}/v1/job/bigfile/allocations`)).json()) as { ID: string }[];
    allocId = allocs[0]?.ID ?? "";
    if (allocId && (await fetch(`${address}/v1/client/fs/stat/${allocId}?path=t/local/big`)).ok) break;
    await sleep(POLL_MS);
  }
  const hostPath = join(dir, "data", "alloc", allocId, "t", "local", "big");
  const cases: [string, string[], Record<string, string>][] = [
    ["cat (floor)", ["cat", hostPath], {}],
    ["curl of drover's /v1/client/fs/cat", ["curl", "-sf", "-o", "/dev/null", `${address}/v1/client/fs/cat/${allocId}?path=t/local/big`], {}],
    ["nomad alloc fs (Nomad 0.12 CLI) against drover", [NOMAD_BINARY, "alloc", "fs", allocId, "t/local/big"], { NOMAD_ADDR: address }],
  ];
  const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
  for (let run = 0; run <= RUNS; run++) {
    for (const [name, argv, env] of cases) {
      const ms = await timed(argv, env);
      // The first round warms the page cache and the agent; it is not counted.
      if (run > 0) times.get(name)!.push(ms);
    }
  }
  printTable(
    `Reading a ${FILE_BYTES / 1e6} MB file of a task's dir (median of ${RUNS})`,
    ["reader", "ms", "MB/s"],
    cases.map(([name]) => {
      const ms = median(times.get(name)!);
      return [name, ms, FILE_BYTES / 1e6 / (ms / 1000)];
    }),
  );
  console.log(machineLine());
} finally {
  agent.kill("SIGKILL");
  await agent.exited;
  await bench.cleanUp();
}
