/**
 * Isolated launch -> task running: the compiled binary's `drover nsenter`
 * (new PID/mount/UTS/IPC namespaces, chroot, identity, execve), beside a plain
 * spawn of the same program (the raw_exec floor) and `runc run` of a busybox
 * bundle, all measured in the same run. "Running" is the task's first byte on
 * stdout; each task is `busybox echo ready`.
 *
 *   bun bench/exec-launch.ts [launches]      (root; runc from `apt-get install runc busybox-static`)
 *
 * A second table shows why the role does its namespace work with plain FFI
 * calls on its JS thread rather than in a C routine compiled with bun:ffi's cc:
 * the compile alone costs more than all of the isolation work.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnProcess } from "../src/runtime/spawn.ts";
import { ensureBinary } from "../test/helpers/binary.ts";
import { createAllocLayout, isolationSpec, startCompiledTask } from "../test/nsenter/layout.ts";
import { machineLine, median, percentile, printTable } from "./lib.ts";

const LAUNCHES = Number(process.argv[2] ?? 50);
/** Launches before measuring, so page cache and binary loading do not count. */
const WARMUP = 3;
const BUSYBOX = "/usr/bin/busybox";
const RUNC = ["/usr/sbin/runc", "/usr/bin/runc"].find(existsSync);

/** Probes run in a fresh Bun each time (each launch is a fresh process); each prints its own ms. */
const PROBE_RUNS = 10;
const DLOPEN_PROBE = `
  const { loadIsolationCalls } = await import(${JSON.stringify(join(import.meta.dir, "../src/runtime/libc.ts"))});
  const start = performance.now();
  loadIsolationCalls();
  console.log(performance.now() - start);
`;

if (process.getuid?.() !== 0) {
  console.error("bench/exec-launch.ts needs root (namespaces, mounts)");
  process.exit(1);
}
if (!existsSync(BUSYBOX)) {
  console.error(`${BUSYBOX} missing: apt-get install -y busybox-static`);
  process.exit(1);
}

interface Launched {
  stdout: ReadableStream<Uint8Array>;
  exited: Promise<unknown>;
}

/** Milliseconds from `launch()` to the first stdout byte, and to exit. */
async function measure(launch: () => Launched): Promise<{ running: number; exited: number }> {
  const start = performance.now();
  const child = launch();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  const running = performance.now() - start;
  if (first.done) throw new Error("the task printed nothing");
  while (!(await reader.read()).done);
  await child.exited;
  return { running, exited: performance.now() - start };
}

async function series(launch: () => Launched) {
  for (let i = 0; i < WARMUP; i++) await measure(launch);
  const samples = [];
  for (let i = 0; i < LAUNCHES; i++) samples.push(await measure(launch));
  return { running: samples.map((s) => s.running), exited: samples.map((s) => s.exited) };
}

const work = mkdtempSync(join(tmpdir(), "drover-bench-exec-"));
try {
  const binary = ensureBinary();
  const layout = createAllocLayout(join(work, "alloc-1"));
  const specFile = join(work, "spec.json");
  writeFileSync(specFile, JSON.stringify(isolationSpec(layout, { argv: [BUSYBOX, "echo", "ready"] })));

  const plain = await series(() => {
    const child = spawnProcess({ argv: [BUSYBOX, "echo", "ready"], env: {}, stdout: "pipe" });
    return { stdout: child.stdout!, exited: child.exited };
  });
  const drover = await series(() => {
    const child = startCompiledTask(binary, specFile);
    return { stdout: child.stdout, exited: child.exited };
  });
  const runc = RUNC ? await series(runcLauncher(RUNC, work)) : null;

  const row = (what: string, s: { running: number[]; exited: number[] } | null) =>
    s ? [what, median(s.running), percentile(s.running, 99), median(s.exited)] : [what, "n/a", "n/a", "n/a"];
  printTable(
    `Launch -> running (${LAUNCHES} launches each, compiled binary)`,
    ["what", "p50 ms", "p99 ms", "to exit p50 ms"],
    [
      row("plain spawn (raw_exec floor)", plain),
      row("drover nsenter (exec driver)", drover),
      row(RUNC ? "runc run (busybox bundle)" : "runc run (not installed)", runc),
    ],
  );
  if (runc) console.log(`drover / runc at p50: ${(median(drover.running) / median(runc.running)).toFixed(2)} (goal <= 1.5)`);

  printTable("Per launch, in a fresh process: FFI on the JS thread vs a C routine", ["what", "p50 ms"], [
    ["dlopen libc's isolation calls (what the role does)", median(firstCallTimes(DLOPEN_PROBE))],
    ["bun:ffi cc: compile a minimal C routine (not used)", median(firstCallTimes(cCompileProbe(work)))],
  ]);
  console.log(machineLine());
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** A runc bundle: busybox as the rootfs, `busybox echo ready` as the process, read-only root. */
function runcLauncher(runc: string, dir: string): () => Launched {
  const bundle = join(dir, "bundle");
  const state = join(dir, "runc-state");
  mkdirSync(join(bundle, "rootfs", "bin"), { recursive: true });
  mkdirSync(state);
  copyFileSync(BUSYBOX, join(bundle, "rootfs", "bin", "busybox"));
  chmodSync(join(bundle, "rootfs", "bin", "busybox"), 0o755);
  const generated = Bun.spawnSync([runc, "spec", "--bundle", bundle]);
  if (generated.exitCode !== 0) throw new Error(`runc spec failed: ${generated.stderr}`);
  const config = JSON.parse(readFileSync(join(bundle, "config.json"), "utf8"));
  config.process.terminal = false;
  config.process.args = ["/bin/busybox", "echo", "ready"];
  config.root.readonly = true;
  writeFileSync(join(bundle, "config.json"), JSON.stringify(config));
  let id = 0;
  return () => {
    const child = spawnProcess({
      argv: [runc, "--root", state, "run", "--bundle", bundle, `drover-bench-${process.pid}-${id++}`],
      env: { PATH: process.env.PATH },
      stdout: "pipe",
    });
    return { stdout: child.stdout!, exited: child.exited };
  };
}

function cCompileProbe(dir: string): string {
  const source = join(dir, "routine.c");
  writeFileSync(
    source,
    [
      "int unshare(int); int mount(const char*, const char*, const char*, unsigned long, const void*);",
      "int pivot_root(const char*, const char*); int execve(const char*, char* const*, char* const*);",
      'int isolate(int flags) { if (unshare(flags)) return -1; return mount(0, "/", 0, 0x44000, 0); }',
    ].join("\n"),
  );
  return `
    const { cc } = await import("bun:ffi");
    const start = performance.now();
    cc({ source: ${JSON.stringify(source)}, symbols: { isolate: { args: ["i32"], returns: "i32" } } });
    console.log(performance.now() - start);
  `;
}

function firstCallTimes(probe: string): number[] {
  return Array.from({ length: PROBE_RUNS }, () => {
    const result = Bun.spawnSync([process.execPath, "-e", probe], { stdout: "pipe", stderr: "inherit" });
    return Number(result.stdout.toString().trim());
  });
}
