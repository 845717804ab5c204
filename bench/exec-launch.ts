/**
 * Isolated launch -> task running: the compiled binary's `drover nsenter`
 * (new PID/mount/UTS/IPC namespaces, chroot, identity, execve), beside a plain
 * spawn of the same program (the raw_exec floor) and `runc run` of a bundle
 * holding the same program, all measured in the same run. "Running" is the
 * task's first byte on stdout; each task is the host's own `/bin/echo ready`,
 * so nothing needs installing (runc, the peer, is measured where it is
 * installed: `apt-get install runc`).
 *
 *   bun bench/exec-launch.ts [launches]      (root: namespaces and mounts)
 *
 * A second table shows why the role does its namespace work with plain FFI
 * calls on its JS thread rather than in a C routine compiled with bun:ffi's cc:
 * the compile alone costs more than all of the isolation work.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawnProcess } from "../src/runtime/spawn.ts";
import { ensureBinary } from "../test/helpers/binary.ts";
import { createAllocLayout, isolationSpec, startCompiledTask } from "../test/nsenter/layout.ts";
import { machineLine, median, percentile, printTable } from "./lib.ts";

const LAUNCHES = Number(process.argv[2] ?? 50);
/** Launches before measuring, so page cache and binary loading do not count. */
const WARMUP = 3;
/** What every launcher runs: a program every Linux host has. */
const TASK = ["/bin/echo", "ready"];
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
  console.log("not measured: bench/exec-launch.ts needs root (namespaces, mounts)");
  process.exit(0);
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
  writeFileSync(specFile, JSON.stringify(isolationSpec(layout, { argv: TASK })));

  const plain = await series(() => {
    const child = spawnProcess({ argv: TASK, env: {}, stdout: "pipe" });
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
      row(RUNC ? "runc run (bundle of the same program)" : "runc run (not installed: apt-get install runc)", runc),
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

/** Copies `program` and the shared libraries `ldd` names for it into `rootfs`, at their own paths. */
function copyWithLibraries(program: string, rootfs: string): void {
  const ldd = Bun.spawnSync(["ldd", program], { stdout: "pipe", stderr: "pipe" });
  const libraries = [...ldd.stdout.toString().matchAll(/(\/\S+) \(0x/g)].map((match) => match[1]!);
  for (const path of [program, ...libraries]) {
    const target = join(rootfs, path);
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(path, target);
    chmodSync(target, 0o755);
  }
}

/** A runc bundle: the task's program and its libraries as the rootfs, the task as the process, read-only root. */
function runcLauncher(runc: string, dir: string): () => Launched {
  const bundle = join(dir, "bundle");
  const state = join(dir, "runc-state");
  mkdirSync(state);
  copyWithLibraries(TASK[0]!, join(bundle, "rootfs"));
  const generated = Bun.spawnSync([runc, "spec", "--bundle", bundle]);
  if (generated.exitCode !== 0) throw new Error(`runc spec failed: ${generated.stderr}`);
  const config = JSON.parse(readFileSync(join(bundle, "config.json"), "utf8"));
  config.process.terminal = false;
  config.process.args = TASK;
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
