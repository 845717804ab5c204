/** Shared pieces of the bench/ scripts: statistics, the printed table, and clean-up of what a run leaves. */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { readProcs, removeDir } from "../src/cgroups/files.ts";
import { parentCgroupDirs } from "../src/cgroups/paths.ts";
import { killPids, sleep } from "../test/helpers/index.ts";

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

/** Kills whatever still runs in the tasks' cgroups under `parent` (a failed run's tasks), then removes them. */
export async function removeCgroupParent(parent: string): Promise<void> {
  for (const dir of parentCgroupDirs(detectCgroups(), parent)) {
    if (!existsSync(dir)) continue;
    for (const task of readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      killPids(readProcs(join(dir, task.name)));
      await sleep(50);
      removeDir(join(dir, task.name));
    }
    removeDir(dir);
  }
}
