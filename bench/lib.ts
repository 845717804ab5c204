/** Shared pieces of the bench/ scripts: statistics, the printed table, and the clean-up after an agent. */
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { readProcs, removeDir } from "../src/cgroups/files.ts";
import { parentCgroupDirs } from "../src/cgroups/paths.ts";
import { detachMountsUnder } from "../src/runtime/mounts.ts";
import { killPids, pidsWithCmdline, sleep } from "../test/helpers/index.ts";

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export const median = (values: readonly number[]) => percentile(values, 50);

/** Prints rows as an aligned Markdown table (so it can be pasted into the README). */
export function printTable(title: string, header: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  const cells = [header, ...rows].map((row) => row.map((cell) => (typeof cell === "number" ? format(cell) : cell)));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) => `| ${row.map((cell, i) => cell.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(`\n${title}\n`);
  console.log(line(cells[0]!));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const row of cells.slice(1)) console.log(line(row));
  console.log();
}

function format(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** Machine facts printed under each table so figures are read in context. */
export function machineLine(): string {
  const os = require("node:os") as typeof import("node:os");
  return `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Linux ${os.release()}`;
}

/**
 * Ends what a bench's agent left: executors and the log pump outlive agents by
 * design, so they are ended by their command lines under `dir`, and any task
 * a failed run left through the tasks' cgroups under `cgroupParent`; then the
 * mounts under `dir` and `dir` itself go.
 */
export async function removeAgentLeftovers(dir: string, cgroupParent: string): Promise<void> {
  killPids(pidsWithCmdline(dir));
  for (const parent of parentCgroupDirs(detectCgroups(), cgroupParent)) {
    if (!existsSync(parent)) continue;
    for (const task of readdirSync(parent, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      killPids(readProcs(join(parent, task.name)));
      await sleep(50);
      removeDir(join(parent, task.name));
    }
    removeDir(parent);
  }
  detachMountsUnder(dir);
  rmSync(dir, { recursive: true, force: true });
}
