/**
 * Start-up cost of the compiled binary, beside /bin/true (the floor of
 * exec'ing anything) measured in the same run:
 *   - `drover version`: wall time and max RSS
 *   - `drover agent -dev`: exec until GET /v1/agent/health answers 200
 *
 *   bun bench/startup.ts [runs]
 */
import { writeFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinary } from "../test/helpers/binary.ts";
import { freePort } from "../test/helpers/index.ts";
import { machineLine, median, percentile, printTable } from "./lib.ts";

const RUNS = Number(process.argv[2] ?? 30);
const binary = ensureBinary();

function timeCommand(argv: string[]): { ms: number; maxRssKiB: number } {
  const start = performance.now();
  const result = Bun.spawnSync(argv, { stdout: "ignore", stderr: "ignore" });
  const ms = performance.now() - start;
  if (result.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${result.exitCode}`);
  return { ms, maxRssKiB: maxRssKiB(argv) };
}

/** GNU time's %M: the child's own peak RSS in KiB (Bun's resourceUsage here reports more than the child). */
function maxRssKiB(argv: string[]): number {
  const result = Bun.spawnSync(["/usr/bin/time", "-f", "%M", ...argv], { stdout: "ignore", stderr: "pipe" });
  return Number(result.stderr.toString().trim().split("\n").pop());
}

function series(argv: string[]) {
  timeCommand(argv); // warm the page cache
  const samples = Array.from({ length: RUNS }, () => timeCommand(argv));
  return { ms: samples.map((s) => s.ms), rss: samples.map((s) => s.maxRssKiB) };
}

async function agentToHealthy(): Promise<number> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "drover-bench-"));
  const config = join(dir, "port.json");
  writeFileSync(config, JSON.stringify({ ports: { http: port }, log_level: "WARN" }));
  const start = performance.now();
  const agent = Bun.spawn([binary, "agent", "-dev", "-config", config], { stdout: "ignore", stderr: "ignore" });
  let elapsed = Number.NaN;
  for (;;) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/v1/agent/health`);
      if (res.status === 200) {
        elapsed = performance.now() - start;
        break;
      }
    } catch {
      // Not listening yet.
    }
    if (performance.now() - start > 10_000) break;
    await Bun.sleep(1);
  }
  agent.kill("SIGTERM");
  await agent.exited;
  rmSync(dir, { recursive: true, force: true });
  return elapsed;
}

const floor = series(["/bin/true"]);
const version = series([binary, "version"]);
await agentToHealthy();
const agent: number[] = [];
for (let i = 0; i < Math.min(RUNS, 20); i++) agent.push(await agentToHealthy());

printTable(
  `Start-up (${RUNS} runs; agent ${agent.length} runs)`,
  ["what", "p50 ms", "p90 ms", "max RSS MiB (p50)"],
  [
    ["/bin/true (floor)", median(floor.ms), percentile(floor.ms, 90), median(floor.rss) / 1024],
    ["drover version", median(version.ms), percentile(version.ms, 90), median(version.rss) / 1024],
    ["drover agent -dev -> /v1/agent/health 200", median(agent), percentile(agent, 90), "n/a"],
  ],
);
console.log(machineLine());
