/**
 * What it costs the API to tell a task's request from an operator's: every
 * TCP request asks the kernel who holds the other end (one sock_diag lookup)
 * and maps the socket's v2 cgroup id to a task (cached). Beside it, in the
 * same run: the same requests with no check (the floor), the lookup alone,
 * and the way the issue sketched (/proc/net/tcp for the inode, then every
 * process's /proc/PID/fd for its holder), with the host's own process count.
 *
 *   bun bench/caller-check.ts [requests]     (root, for the task cgroup)
 *
 * Requests are sequential on one keep-alive connection, from this process
 * (an operator: let through) and from a Bun client placed in a task's
 * cgroups (refused with 403).
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { Hono } from "hono";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { removeDir } from "../src/cgroups/files.ts";
import { cgroupDirs, parentCgroupDirs, taskCgroupPaths } from "../src/cgroups/paths.ts";
import { openTaskCgroup } from "../src/cgroups/task-cgroup.ts";
import { taskAccess, type RequestOrigin } from "../src/api/task-access.ts";
import { TaskPeers } from "../src/client/task-peers.ts";
import { serveHttp } from "../src/runtime/serve.ts";
import { lookupTcpSocket } from "../src/runtime/sock-diag.ts";
import { spawnProcess } from "../src/runtime/spawn.ts";
import { machineLine, median, percentile, printTable } from "./lib.ts";

const REQUESTS = Number(process.argv[2] ?? 2000);
/** Requests before measuring, so the JIT and the cgroup-id cache are warm. */
const WARMUP = 200;
const LOOKUPS = 5000;
const SCANS = 20;

if (process.getuid?.() !== 0) {
  console.error("bench/caller-check.ts needs root (a task cgroup for the refused client)");
  process.exit(1);
}

const layout = detectCgroups();
const parent = `drover-bench-caller-${process.pid}`;
const peers = new TaskPeers(layout, parent);

function app(guarded: boolean): Hono {
  const hono = new Hono<{ Bindings: RequestOrigin }>();
  if (guarded) hono.use(taskAccess({ identifyPeer: (remote, local) => peers.identify(remote, local) }));
  hono.get("/v1/agent/health", (c) => c.json({ ok: true }));
  return hono as unknown as Hono;
}

/** Per-request milliseconds of `count` sequential keep-alive GETs from this process. */
async function fromHost(port: number, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < WARMUP + count; i++) {
    const start = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/v1/agent/health`);
    await response.arrayBuffer();
    if (i >= WARMUP) times.push(performance.now() - start);
  }
  return times;
}

/** A client for fromTask: the same requests as fromHost, in a process of its own; prints its times and statuses. */
const TASK_CLIENT = `
const [port, count, warmup] = process.argv.slice(1).map(Number);
const times = [];
const statuses = new Set();
for (let i = 0; i < warmup + count; i++) {
  const start = performance.now();
  const response = await fetch("http://127.0.0.1:" + port + "/v1/agent/health");
  await response.arrayBuffer();
  if (i >= warmup) { times.push(performance.now() - start); statuses.add(response.status); }
}
console.log(JSON.stringify({ times, statuses: [...statuses] }));
`;

/** The same requests from a process in a task's cgroups (it joins them all before it starts). */
async function fromTask(dirs: readonly string[], port: number, count: number): Promise<{ times: number[]; statuses: number[] }> {
  const join = dirs.map((dir) => `echo $$ > ${dir}/cgroup.procs`).join("; ");
  const argv = ["/bin/sh", "-c", `${join}; exec "$0" -e "$1" ${port} ${count} ${WARMUP}`, process.execPath, TASK_CLIENT];
  const child = spawnProcess({ argv, env: {}, stdout: "pipe" });
  const output = await new Response(child.stdout).text();
  await child.exited;
  return JSON.parse(output) as { times: number[]; statuses: number[] };
}

function timeEach(count: number, run: () => void): number[] {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return times;
}

/** The sketch: the peer's inode from /proc/net/tcp, then its holder among every process's descriptors. */
function procScan(peerPort: number): number | null {
  const hexPort = peerPort.toString(16).toUpperCase().padStart(4, "0");
  const line = readFileSync("/proc/net/tcp", "utf8").split("\n").find((entry) => entry.trim().split(/\s+/)[1]?.endsWith(`:${hexPort}`));
  const inode = line?.trim().split(/\s+/)[9];
  if (!inode) return null;
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${inode}]`) return Number(pid);
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return null;
}

const paths = taskCgroupPaths(layout, parent, randomUUID(), "bench");
if (!paths) throw new Error("no cgroups on this host");
const cgroup = openTaskCgroup(paths);
cgroup.create({ cpuMhz: 0, memoryMb: 0, memoryMaxMb: 0, pidsLimit: 0 });
const plain = serveHttp((request, connection) => app(false).fetch(request, { connection }), "127.0.0.1", 0);
const guardedApp = app(true);
const guarded = serveHttp((request, connection) => guardedApp.fetch(request, { connection }), "127.0.0.1", 0);
const floorApp = app(false);
const floor = serveHttp((request, connection) => floorApp.fetch(request, { connection }), "127.0.0.1", 0);
try {
  const hostFloor = await fromHost(floor.port, REQUESTS);
  const hostChecked = await fromHost(guarded.port, REQUESTS);
  const taskFloor = await fromTask(cgroupDirs(paths), floor.port, REQUESTS);
  const taskChecked = await fromTask(cgroupDirs(paths), guarded.port, REQUESTS);
  if (taskChecked.statuses.join() !== "403") throw new Error(`the task's requests were answered ${taskChecked.statuses.join(", ")}, not 403`);

  // A live connection of this process to look up, the way each request does.
  const { connect } = await import("node:net");
  const socket = connect(plain.port, "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  const lookup = timeEach(LOOKUPS, () => lookupTcpSocket({ address: "127.0.0.1", port: socket.localPort! }, { address: "127.0.0.1", port: plain.port }));
  const scan = timeEach(SCANS, () => procScan(socket.localPort!));
  socket.destroy();
  const processes = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).length;

  const row = (what: string, times: readonly number[]) => [what, median(times) * 1000, percentile(times, 99) * 1000];
  printTable(`Telling a task's request from an operator's (${REQUESTS} sequential keep-alive requests each; µs)`, ["what", "p50 µs", "p99 µs"], [
    row("operator request, no check (floor)", hostFloor),
    row("operator request, checked (let through)", hostChecked),
    row("task request, no check (floor)", taskFloor.times),
    row("task request, checked (refused: 403)", taskChecked.times),
    row("the sock_diag lookup alone", lookup),
    row(`/proc/net/tcp + every /proc/PID/fd (${processes} processes)`, scan),
  ]);
  console.log(machineLine());
} finally {
  await Promise.all([plain.stop(true), guarded.stop(true), floor.stop(true)]);
  cgroup.remove();
  for (const dir of parentCgroupDirs(layout, parent)) removeDir(dir);
}
