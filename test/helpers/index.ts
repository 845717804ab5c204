/**
 * Shared test fixtures: capability guards, temporary directories, free ports,
 * polling, and process checks by pid (never by name).
 */
import { afterAll } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectCgroups } from "../../src/cgroups/detect.ts";
import { isAlive, processStartTime } from "../../src/stats/process.ts";
import { detachMountsUnder } from "../../src/runtime/mounts.ts";

/** What this machine lets the tests exercise; guards skip with the reason printed. */
export const capabilities = {
  root: process.getuid?.() === 0,
  cgroups: detectCgroups(),
};

/** A fresh directory under the system temp dir, removed after the file's tests. */
export function tempDir(prefix = "drover-test-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  afterAll(async () => {
    await stopReapersUnder(dir);
    detachMountsUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** The host reapers (`drover reaper <run dir>`) whose run dir is `dir` or under it: one per run dir a test's drivers used. */
export function reapersUnder(dir: string): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        const role = argv.indexOf("reaper");
        const runDir = argv[role + 1];
        return role >= 0 && runDir !== undefined && (runDir === dir || runDir.startsWith(`${dir}/`)) && isRunning(pid);
      } catch {
        return false;
      }
    });
}

/** The executors (and their tasks' helpers) of a run dir: the processes that name it, the host reaper left out (it stays while its agent is connected). */
export function executorsUnder(runDir: string): number[] {
  const reapers = reapersUnder(runDir);
  return pidsWithCmdline(runDir).filter((pid) => !reapers.includes(pid));
}

/** Ends the reapers of `dir` (each outlives the drivers that started it) and waits until they are gone. */
export async function stopReapersUnder(dir: string): Promise<void> {
  const pids = reapersUnder(dir);
  for (const pid of pids) process.kill(pid, "SIGTERM");
  await waitFor("the test's host reapers to exit", () => pids.every((pid) => !isRunning(pid)));
}

/** The names in a run directory but the host reaper's own files (reaper.sock, .log, .lock). */
export function runDirEntries(runDir: string): string[] {
  return readdirSync(runDir).filter((name) => !/^reaper\.(sock|log|lock)$/.test(name));
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a truthy value; fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 20 } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`);
}

/** The state letter of a process from /proc/PID/stat, or null when it does not exist. */
export function processState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
  } catch {
    return null;
  }
}

/** True while `pid` exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  const state = processState(pid);
  return state !== null && state !== "Z";
}

/** Parent pid of `pid`, or null. */
export function parentPid(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return null;
  }
}

/** SIGKILLs each pid that still runs; for pids just read from /proc or a cgroup, not remembered ones. */
export function killPids(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/**
 * Processes a test file saw start, each with its start time, for clean-up at
 * the file's end: by then most have exited and their pids may name other
 * processes, so only those still the process that was seen are SIGKILLed.
 */
export class StartedProcesses {
  private readonly seen = new Map<number, number>();

  /** Remembers `pid` if it runs now. */
  add(pid: number): void {
    const startTime = processStartTime(pid);
    if (startTime !== null) this.seen.set(pid, startTime);
  }

  killLeftovers(): void {
    killPids([...this.seen].filter(([pid, startTime]) => isAlive(pid, startTime)).map(([pid]) => pid));
    this.seen.clear();
  }
}

/** The environment of `pid` as a map, or null when it is gone or unreadable. */
export function processEnv(pid: number): Record<string, string> | null {
  try {
    const text = readFileSync(`/proc/${pid}/environ`, "utf8");
    return Object.fromEntries(
      text
        .split("\0")
        .filter(Boolean)
        .map((entry) => {
          const at = entry.indexOf("=");
          return [entry.slice(0, at), entry.slice(at + 1)];
        }),
    );
  } catch {
    return null;
  }
}

/** Running (non-zombie) pids whose command line contains `needle`. */
export function pidsWithCmdline(needle: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").includes(needle) && isRunning(pid)) out.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

/** Running (non-zombie) pids whose environment has `name`=`value`. */
export function pidsWithEnv(name: string, value: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (processEnv(pid)?.[name] === value && isRunning(pid)) out.push(pid);
  }
  return out;
}
