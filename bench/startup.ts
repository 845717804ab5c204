/**
 * Start-up cost of the compiled binary and of drover on Deno (`deno run -A
 * src/main.ts`), beside /bin/true (the floor of exec'ing anything) measured
 * in the same run:
 *   - `drover version`: wall time and max RSS
 *   - `drover agent -dev`: exec until GET /v1/agent/health answers 200
 *
 *   bun bench/startup.ts [runs]      (DROVER_RUNTIMES=bun or deno for one)
 */
import { writeFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../test/helpers/index.ts";
import { droverRuntimes } from "../test/helpers/runtimes.ts";
import { machineLine, median, percentile, printTable } from "./lib.ts";

const RUNS = Number(process.argv[2] ?? 30);

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

async function agentToHealthy(drover: readonly string[]): Promise<number> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "drover-bench-"));
  const config = join(dir, "port.json");
  writeFileSync(config, JSON.stringify({ ports: { http: port }, log_level: "WARN" }));
  const start = performance.now();
  const agent = Bun.spawn([...drover, "agent", "-dev", "-config", config], { stdout: "ignore", stderr: "ignore" });
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
const rows: (string | number)[][] = [["/bin/true (floor)", median(floor.ms), percentile(floor.ms, 90), median(floor.rss) / 1024]];
for (const runtime of droverRuntimes()) {
  const label = runtime.name === "bun" ? "Bun, compiled" : "Deno";
  const version = series([...runtime.argv, "version"]);
  await agentToHealthy(runtime.argv);
  const agent: number[] = [];
  for (let i = 0; i < Math.min(RUNS, 20); i++) agent.push(await agentToHealthy(runtime.argv));
  rows.push([`drover version (${label})`, median(version.ms), percentile(version.ms, 90), median(version.rss) / 1024]);
  rows.push([`drover agent -dev -> /v1/agent/health 200 (${label})`, median(agent), percentile(agent, 90), "n/a"]);
}

printTable(`Start-up (${RUNS} runs; agent ${Math.min(RUNS, 20)} runs)`, ["what", "p50 ms", "p90 ms", "max RSS MiB (p50)"], rows);
console.log(machineLine());
