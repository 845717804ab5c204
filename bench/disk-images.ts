/**
 * What ephemeral_disk as a hard limit adds to an alloc's start and removal:
 * the alloc dir on a loop-mounted ext4 image of its size (written from the
 * size's template, made by mkfs.ext4 for the first alloc; then the mount:
 * client/allocdir/disk-image.ts) against a plain directory, for
 * allocs started one after another and N at once. Needs root and loop
 * devices.
 *
 *   bun bench/disk-images.ts [allocs] [size MB]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { AllocDir } from "../src/client/allocdir/alloc-dir.ts";
import { DiskImages } from "../src/client/allocdir/disk-image.ts";
import { machineLine, percentile, printTable } from "./lib.ts";

const ALLOCS = Number(process.argv[2] ?? 20);
const SIZE_MB = Number(process.argv[3] ?? 300);

const base = mkdtempSync(join(tmpdir(), "drover-bench-disk-images-"));
const root = join(base, "alloc");
const images = new DiskImages(root, pino({ level: "silent" }));
const reason = await images.unavailable();
if (reason) {
  console.error(`bench/disk-images.ts: ${reason}`);
  process.exit(1);
}

let next = 0;
const allocDir = () => new AllocDir(root, `bbbbbbbb-0000-0000-0000-${String(next++).padStart(12, "0")}`);

async function start(withImage: boolean): Promise<{ dir: AllocDir; ms: number }> {
  const dir = allocDir();
  const began = performance.now();
  if (withImage) await images.attach(dir, SIZE_MB);
  dir.build();
  return { dir, ms: performance.now() - began };
}

async function remove(dir: AllocDir): Promise<number> {
  const began = performance.now();
  await dir.destroy();
  await images.remove(dir.allocId);
  return performance.now() - began;
}

const rows: (string | number)[][] = [];
const fmt = (ms: number) => ms.toFixed(1);
try {
  for (const withImage of [false, true]) {
    const name = withImage ? `own ext4 image (${SIZE_MB} MB)` : "plain directory";
    const serial: number[] = [];
    const removals: number[] = [];
    for (let i = 0; i < ALLOCS; i++) {
      const { dir, ms } = await start(withImage);
      serial.push(ms);
      removals.push(await remove(dir));
    }
    const began = performance.now();
    const together = await Promise.all(Array.from({ length: ALLOCS }, () => start(withImage)));
    const allMs = performance.now() - began;
    await Promise.all(together.map(({ dir }) => remove(dir)));
    rows.push([name, fmt(percentile(serial, 50)), fmt(percentile(serial, 95)), fmt(percentile(removals, 50)), fmt(allMs)]);
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}

console.log(machineLine());
printTable(`alloc dir start, ${ALLOCS} allocs`, ["alloc dir", "start p50 ms", "start p95 ms", "removal p50 ms", `${ALLOCS} started at once, ms`], rows);
