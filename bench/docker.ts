/**
 * The docker driver (no daemon) beside Docker Engine and Podman, in the
 * same run, runs interleaved, medians. drover is the compiled agent
 * (dist/drover: `bun build.ts` first) running Nomad docker jobs; the images
 * come from Debian's docker-registry on 127.0.0.1 (built with umoci from
 * busybox-static, pushed with skopeo), for every runtime alike.
 *
 *   cached start   image already stored; drover: POST a count-1 job until its
 *                  alloc is running; docker/podman: `run -d` until it returns
 *                  (the container started). Goal: drover <= 0.5 x Docker.
 *   N at once     N containers of one image until all run (drover: one job of
 *                  count N; docker/podman: N `run -d`, PEER_PARALLEL at a time),
 *                  and then the helper memory per running container (PSS):
 *                  drover's executors + logmon, containerd-shim, conmon; the
 *                  daemons beside. Goal: drover <= 1 MiB per container.
 *   pull           a ~100 MB image (one incompressible layer) from the
 *                  registry, pull + unpack: drover (fresh agent, the time
 *                  between its "Downloading image" and "Downloaded image"
 *                  events), docker pull, podman pull, and `skopeo copy` into an
 *                  OCI layout (download only). Goal: drover >= 0.8 x skopeo's speed.
 *   disk           du -skx of each runtime's whole store (images, containers,
 *                  task dirs) with DISK_TASKS containers of the 100 MB image.
 *                  Goal: one copy of the image.
 *
 * Peers are Debian's docker.io (dockerd 20.10, with the flags this host needs:
 * --iptables=false --bridge=none --exec-opt native.cgroupdriver=cgroupfs,
 * private --data-root/--exec-root/-H/--pidfile) and podman (4.3, runc,
 * cgroupfs, the ulimits this host allows, private --root/--runroot/--tmpdir);
 * one that is not installed is skipped, saying so. Every container runs with
 * the host's network, as drover's tasks do. Everything started is ended at
 * the end and its dirs removed.
 *
 *   bun bench/docker.ts [--only cached] [--baseline <drover binary>] [cached-start runs] [N at once]
 *
 *   --only cached        just the cached-start row (no pull, disk or N-at-once rows)
 *   --baseline <binary>  another drover binary (a build of main, say) in the
 *                        cached-start row too, interleaved with dist/drover:
 *                        before/after figures from one run
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { detachMountsUnder } from "../src/runtime/mounts.ts";
import { executorsUnder, killPids, pidsWithCmdline, sleep, waitFor } from "../test/helpers/index.ts";
import { buildImage, missingTools, TestRegistry } from "../test/helpers/registry.ts";
import { benchAgent, machineLine, median, memoryOf, printTable, type BenchAgent } from "./lib.ts";

/** `--name value` options out of argv; what is left are the positional arguments. */
function options(argv: readonly string[]): { named: Map<string, string>; positional: string[] } {
  const named = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i]!.startsWith("--")) named.set(argv[i]!.slice(2), argv[++i] ?? "");
    else positional.push(argv[i]!);
  }
  return { named, positional };
}
const { named, positional } = options(process.argv.slice(2));
for (const [name, value] of named) {
  if (!(name === "only" && value === "cached") && name !== "baseline") {
    console.error(`bench/docker.ts: unknown option --${name} ${value} (have: --only cached, --baseline <drover binary>)`);
    process.exit(2);
  }
}
const ONLY_CACHED = named.get("only") === "cached";
const BASELINE = named.get("baseline");
const RUNS = Number(positional[0] ?? 7);
const MANY = Number(positional[1] ?? 100);
const PULL_RUNS = 3;
const DISK_TASKS = 20;
const BIG_BYTES = 100 * 1024 * 1024;
/** docker/podman CLI calls in flight at once for the N-at-once row. */
const PEER_PARALLEL = 10;
const MIB = 1024 * 1024;
/** Waits for a daemon to answer, for N allocs to run, for purged tasks to end. */
const DAEMON_START_TIMEOUT_MS = 60_000;
const ALL_RUNNING_TIMEOUT_MS = 300_000;
const STOP_TIMEOUT_MS = 60_000;
/** After N containers run: time for helpers to settle before their memory is read. */
const SETTLE_MS = 2_000;

const missing = missingTools();
if (missing.length > 0) {
  console.error(`bench/docker.ts: missing Debian packages ${missing.join(", ")} (the registry and the images)`);
  process.exit(1);
}
if (!existsSync("dist/drover")) {
  console.error("bench/docker.ts: dist/drover is missing: run `bun build.ts` first");
  process.exit(1);
}
if (BASELINE !== undefined && !existsSync(BASELINE)) {
  console.error(`bench/docker.ts: --baseline ${BASELINE}: no such file`);
  process.exit(1);
}

const base = mkdtempSync(join(tmpdir(), "drover-bench-docker-"));
const loadBefore = loadavg();

/** Runs argv; resolves with its stdout, rejects with its stderr on a non-zero exit. */
function exec(argv: readonly string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk));
    child.stderr.on("data", (chunk: Buffer) => (err += chunk));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`${argv.join(" ")}: exit ${code}: ${err.trim()}`))));
  });
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const began = performance.now();
  await work();
  return performance.now() - began;
}

/** Runs `count` jobs of `work`, `parallel` at a time. */
async function inParallel(count: number, parallel: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, async () => {
    while (next < count) await work(next++);
  }));
}

/** Where the peers' containers (and conmons) go, instead of the host-wide /docker and /libpod_parent. */
const cgroupParent = (peer: string) => `drover-bench-${peer}-${process.pid}`;
const CGROUP_ROOT = "/sys/fs/cgroup";

/** Removes cgroup `name` and everything below it, in every hierarchy (each must be empty of processes by now). */
function removeCgroupTree(name: string): void {
  const remove = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) remove(join(dir, entry.name));
    rmdirSync(dir);
  };
  for (const hierarchy of readdirSync(CGROUP_ROOT)) {
    const dir = join(CGROUP_ROOT, hierarchy, name);
    if (existsSync(dir)) remove(dir);
  }
}

const sumPss = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + memoryOf(pid).pss, 0);
const duMiB = async (dir: string) => Number((await exec(["du", "-skx", dir])).split("\t")[0]) / 1024;

/** A container runtime beside drover, driven by its CLI. */
interface Peer {
  readonly name: string;
  /** Starts a detached container of `image` (its Cmd sleeps), on the host's network. */
  run(image: string): Promise<unknown>;
  removeAll(): Promise<unknown>;
  pull(image: string): Promise<unknown>;
  removeImage(image: string): Promise<unknown>;
  /** The per-container helper processes (containerd-shim, conmon). */
  helperPids(): number[];
  /** Daemons every container shares (dockerd, containerd), [] for none. */
  daemonPids(): number[];
  /** The dir holding its images and containers. */
  readonly storage: string;
  stop(): Promise<void>;
}

const whichBin = (...paths: string[]) => paths.find((path) => existsSync(path));

async function startDocker(): Promise<Peer | string> {
  const dockerd = whichBin("/usr/sbin/dockerd", "/usr/bin/dockerd");
  // Debian's CLI, not a newer one elsewhere on the PATH, to match the daemon.
  const cli = whichBin("/usr/bin/docker");
  if (!dockerd || !cli) return "not installed (apt-get install docker.io)";
  const dir = join(base, "docker");
  const dataRoot = join(dir, "data");
  const execRoot = join(dir, "exec");
  const socket = join(dir, "docker.sock");
  mkdirSync(join(dir, "config"), { recursive: true });
  const log = openSync(join(dir, "dockerd.log"), "a");
  const daemon = spawn(
    dockerd,
    [
      "--data-root", dataRoot, "--exec-root", execRoot, "-H", `unix://${socket}`, "--pidfile", join(dir, "dockerd.pid"),
      "--iptables=false", "--bridge=none", "--exec-opt", "native.cgroupdriver=cgroupfs", "--cgroup-parent", `/${cgroupParent("docker")}`,
    ],
    { stdio: ["ignore", log, log] },
  );
  const env = { DOCKER_CONFIG: join(dir, "config") };
  const docker = (...args: string[]) => exec([cli, "-H", `unix://${socket}`, ...args], env);
  let next = 0;
  const stop = async () => {
    if (daemon.exitCode === null) {
      await docker("rm", "-f", ...(await docker("ps", "-aq")).split("\n").filter(Boolean)).catch(() => undefined);
      daemon.kill("SIGTERM");
      await waitFor("dockerd to end", () => daemon.exitCode !== null || daemon.signalCode !== null, { timeoutMs: STOP_TIMEOUT_MS }).catch(() => daemon.kill("SIGKILL"));
    }
    killPids(pidsWithCmdline(execRoot));
    removeCgroupTree(cgroupParent("docker"));
    detachMountsUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor("dockerd to answer", () => docker("version").then(() => true, () => false), { timeoutMs: DAEMON_START_TIMEOUT_MS, intervalMs: 200 });
  } catch (err) {
    await stop();
    return `dockerd did not start: ${(err as Error).message} (see PLATFORM-NOTES.md)`;
  }
  const driver = (await docker("info", "--format", "{{.Driver}}")).trim();
  return {
    name: `Docker Engine ${(await docker("version", "--format", "{{.Server.Version}}")).trim()} (${driver})`,
    storage: dataRoot,
    run: (image) => docker("run", "-d", "--network", "host", "--name", `bench-${next++}`, image),
    removeAll: async () => {
      const ids = (await docker("ps", "-aq")).split("\n").filter(Boolean);
      if (ids.length > 0) await docker("rm", "-f", ...ids);
    },
    pull: (image) => docker("pull", "-q", image),
    removeImage: (image) => docker("rmi", "-f", image).then(() => undefined, () => undefined),
    helperPids: () => pidsWithCmdline(execRoot).filter((pid) => pidsWithCmdline("containerd-shim").includes(pid)),
    // dockerd and the containerd it supervises (both name the exec root), not the shims.
    daemonPids: () => [...new Set([daemon.pid!, ...pidsWithCmdline(execRoot).filter((pid) => !pidsWithCmdline("containerd-shim").includes(pid))])],
    stop,
  };
}

async function startPodman(): Promise<Peer | string> {
  const podmanBin = whichBin("/usr/bin/podman");
  if (!podmanBin) return "not installed (apt-get install podman)";
  if (!whichBin("/usr/sbin/runc", "/usr/bin/runc")) return "runc is not installed (crun refuses this hybrid-cgroup host)";
  const dir = join(base, "podman");
  const root = join(dir, "root");
  const global = [
    "--root", root, "--runroot", join(dir, "runroot"), "--tmpdir", join(dir, "tmp"),
    "--runtime", "runc", "--cgroup-manager", "cgroupfs", "--events-backend", "none", "--storage-driver", "overlay",
  ];
  mkdirSync(join(dir, "tmp"), { recursive: true });
  const podman = (...args: string[]) => exec([podmanBin, ...global, ...args]);
  const stop = async () => {
    await podman("rm", "-f", "--all").catch(() => undefined);
    killPids(pidsWithCmdline(root));
    removeCgroupTree(cgroupParent("podman"));
    detachMountsUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await podman("info");
  } catch (err) {
    await stop();
    return `podman does not run here: ${(err as Error).message.slice(0, 200)}`;
  }
  const conmons = () => pidsWithCmdline(root).filter((pid) => pidsWithCmdline("conmon").includes(pid));
  return {
    name: `Podman ${(await podman("version", "--format", "{{.Client.Version}}")).trim()} (runc)`,
    storage: root,
    run: (image) => podman("run", "-d", "--cgroup-parent", `/${cgroupParent("podman")}`, "--network", "host", "--ulimit", "nofile=20000:20000", "--ulimit", "nproc=32768:32768", image),
    removeAll: () => podman("rm", "-f", "--all").then(() => undefined),
    pull: (image) => podman("pull", "-q", "--tls-verify=false", image),
    removeImage: (image) => podman("rmi", "-f", image).then(() => undefined, () => undefined),
    helperPids: conmons,
    daemonPids: () => [],
    stop,
  };
}

/** drover: the compiled agent, its docker driver with image GC off (images stay stored between runs). */
async function startDrover(prefix: string, binary?: string): Promise<{ bench: BenchAgent; stop(): Promise<void> }> {
  const runtime = binary === undefined ? {} : { runtime: { name: "baseline", argv: [binary] } };
  const bench = await benchAgent(prefix, { gc_max_allocs: 1000 }, { plugin: { docker: { config: { gc: { image: false } } } }, ...runtime });
  const agent = await bench.start();
  let stopped = false;
  return {
    bench,
    async stop() {
      if (stopped) return;
      stopped = true;
      agent.kill("SIGKILL");
      await agent.exited;
      await bench.cleanUp();
    },
  };
}

interface AllocView {
  ID: string;
  ClientStatus: string;
  DesiredStatus: string;
}

const jobBody = (id: string, image: string, count: number) =>
  JSON.stringify({
    Job: {
      ID: id,
      Type: "service",
      Datacenters: ["dc1"],
      TaskGroups: [{ Name: "g", Count: count, Tasks: [{ Name: "t", Driver: "docker", Config: { image }, Resources: { CPU: 20, MemoryMB: 16 } }] }],
    },
  });

/** POSTs a job of `count` containers of `image`; resolves with its allocs once all run (blocking queries, as `nomad job run` waits). */
async function runJob(address: string, id: string, image: string, count: number): Promise<AllocView[]> {
  const res = await fetch(`${address}/v1/jobs`, { method: "POST", body: jobBody(id, image, count), headers: { "Content-Type": "application/json" } });
  if (!res.ok) throw new Error(`register ${id}: ${res.status} ${await res.text()}`);
  const deadline = Date.now() + ALL_RUNNING_TIMEOUT_MS;
  let index = 0;
  for (;;) {
    const answer = await fetch(`${address}/v1/job/${id}/allocations?index=${index}&wait=5s`);
    index = Number(answer.headers.get("X-Nomad-Index") ?? 0);
    const allocs = ((await answer.json()) as AllocView[]).filter((alloc) => alloc.DesiredStatus === "run");
    if (allocs.some((alloc) => alloc.ClientStatus === "failed")) throw new Error(`${id}: an alloc failed: see GET /v1/allocation/${allocs.find((a) => a.ClientStatus === "failed")!.ID}`);
    if (allocs.length === count && allocs.every((alloc) => alloc.ClientStatus === "running")) return allocs;
    if (Date.now() > deadline) throw new Error(`${id}: not all ${count} running after ${ALL_RUNNING_TIMEOUT_MS} ms`);
  }
}

/** Purges `id` and waits until none of the agent's helpers is left. */
async function purge(bench: BenchAgent, id: string): Promise<void> {
  const res = await fetch(`${bench.address}/v1/job/${id}?purge=true`, { method: "DELETE" });
  if (!res.ok) throw new Error(`purge ${id}: ${res.status} ${await res.text()}`);
  await waitFor(`${id}'s executors to end`, () => executorsUnder(join(bench.dir, "data", "run")).length === 0, { timeoutMs: STOP_TIMEOUT_MS });
}

interface TaskEventView {
  Type: string;
  /** Nanoseconds since the epoch. */
  Time: number;
  DisplayMessage: string;
}

async function taskEvents(address: string, allocId: string): Promise<TaskEventView[]> {
  const alloc = (await (await fetch(`${address}/v1/allocation/${allocId}`)).json()) as { TaskStates: Record<string, { Events: TaskEventView[] }> };
  return alloc.TaskStates.t!.Events;
}

/** ms between the task's `from` and `to` events. */
function betweenMs(events: readonly TaskEventView[], from: (event: TaskEventView) => boolean, to: (event: TaskEventView) => boolean): number {
  const start = events.find(from);
  const end = events.find(to);
  if (!start || !end) throw new Error(`no such task events among: ${events.map((event) => `${event.Type} ${event.DisplayMessage}`).join("; ")}`);
  return (end.Time - start.Time) / 1e6;
}

/** ms between the task's "Downloading image" and "Downloaded image" events. */
async function pullEventsMs(address: string, allocId: string): Promise<number> {
  const events = (await taskEvents(address, allocId)).filter((event) => event.Type === "Driver");
  return betweenMs(events, (event) => event.DisplayMessage === "Downloading image", (event) => event.DisplayMessage.startsWith("Downloaded image"));
}

/** The part of drover's start spent on the node: the task's Received to Started events (alloc dir, image root, executor, launch). */
const NODE_SHARE = "  of which on the node (task Received -> Started)";

const peers: Peer[] = [];
const skipped: string[] = [];
const stops: (() => Promise<void>)[] = [];
let registry: TestRegistry | undefined;

try {
  registry = await TestRegistry.start(base);
  const build = join(base, "build");
  registry.push(buildImage(build, "small", { cmd: ["/bin/sleep", "600"] }), "small", "bench/small:1");
  registry.push(buildImage(build, "big", { files: { "/data/blob": randomBytes(BIG_BYTES) }, cmd: ["/bin/sleep", "600"] }), "big", "bench/big:1");
  const small = `${registry.host}/bench/small:1`;
  const big = `${registry.host}/bench/big:1`;

  for (const start of [startDocker, startPodman]) {
    const peer = await start();
    if (typeof peer === "string") skipped.push(`${start === startDocker ? "Docker Engine" : "Podman"}: ${peer}`);
    else {
      peers.push(peer);
      stops.push(() => peer.stop());
    }
  }
  const drover = await startDrover("drover-bench-docker-");
  stops.push(() => drover.stop());
  const droversStarting: { name: string; agent: Awaited<ReturnType<typeof startDrover>> }[] = [{ name: "drover (compiled agent)", agent: drover }];
  if (BASELINE !== undefined) {
    const baseline = await startDrover("drover-bench-docker-baseline-", BASELINE);
    stops.push(() => baseline.stop());
    droversStarting.push({ name: `drover baseline (${BASELINE})`, agent: baseline });
  }

  // Pull of the big image, interleaved: skopeo, each peer, drover (a fresh agent each run).
  const pulls: Record<string, number[]> = { "skopeo copy (download only)": [], "drover (compiled agent)": [] };
  for (const peer of peers) pulls[peer.name] = [];
  let diskAgent: Awaited<ReturnType<typeof startDrover>> | undefined;
  for (let run = 0; run < (ONLY_CACHED ? 0 : PULL_RUNS); run++) {
    const layout = join(base, `skopeo-${run}`);
    pulls["skopeo copy (download only)"]!.push(await timed(() => exec(["skopeo", "copy", "--quiet", "--src-tls-verify=false", `docker://${big}`, `oci:${layout}:big`])));
    rmSync(layout, { recursive: true, force: true });
    for (const peer of peers) {
      await peer.removeImage(big);
      pulls[peer.name]!.push(await timed(() => peer.pull(big)));
    }
    const fresh = await startDrover(`drover-bench-docker-pull-${run}-`);
    stops.push(() => fresh.stop());
    const [alloc] = await runJob(fresh.bench.address, "pull", big, 1);
    pulls["drover (compiled agent)"]!.push(await pullEventsMs(fresh.bench.address, alloc!.ID));
    if (run < PULL_RUNS - 1) await fresh.stop();
    else diskAgent = fresh;
  }

  // Disk with DISK_TASKS containers of the big image (already pulled by each).
  const disk: [string, number][] = [];
  if (!ONLY_CACHED) {
    await purge(diskAgent!.bench, "pull");
    await runJob(diskAgent!.bench.address, "disk", big, DISK_TASKS);
    disk.push(["drover (compiled agent)", await duMiB(join(diskAgent!.bench.dir, "data"))]);
    disk.push(["  of which its image store", await duMiB(join(diskAgent!.bench.dir, "data", "images"))]);
    await purge(diskAgent!.bench, "disk");
    for (const peer of peers) {
      await inParallel(DISK_TASKS, PEER_PARALLEL, () => peer.run(big));
      disk.push([peer.name, await duMiB(peer.storage)]);
      await peer.removeAll();
      await peer.removeImage(big);
    }
  }

  // Cached image to running: one warm-up each (not counted), then interleaved runs.
  const starts: Record<string, number[]> = {};
  for (const { name } of droversStarting) {
    starts[name] = [];
    starts[`${NODE_SHARE}${name === "drover (compiled agent)" ? "" : ", baseline"}`] = [];
  }
  for (const peer of peers) {
    starts[peer.name] = [];
    await peer.pull(small);
  }
  for (let run = 0; run <= RUNS; run++) {
    for (const { name, agent } of droversStarting) {
      let allocs: AllocView[] = [];
      const ms = await timed(async () => (allocs = await runJob(agent.bench.address, `start-${run}`, small, 1)));
      if (run > 0) {
        starts[name]!.push(ms);
        const events = await taskEvents(agent.bench.address, allocs[0]!.ID);
        starts[`${NODE_SHARE}${name === "drover (compiled agent)" ? "" : ", baseline"}`]!.push(
          betweenMs(events, (event) => event.Type === "Received", (event) => event.Type === "Started"),
        );
      }
      await purge(agent.bench, `start-${run}`);
    }
    for (const peer of peers) {
      const peerMs = await timed(() => peer.run(small));
      if (run > 0) starts[peer.name]!.push(peerMs);
      await peer.removeAll();
    }
  }

  // MANY at once, then the helpers' memory with them all running.
  const many: (string | number)[][] = [];
  if (!ONLY_CACHED) {
    const ms = await timed(() => runJob(drover.bench.address, "many", small, MANY));
    await sleep(SETTLE_MS);
    const agentPid = pidsWithCmdline(join(drover.bench.dir, "agent.json"));
    const helpers = pidsWithCmdline(join(drover.bench.dir, "data")).filter((pid) => !agentPid.includes(pid));
    many.push(["drover (compiled agent)", ms, sumPss(helpers) / MANY / MIB, `${helpers.length} (executors + logmon)`, sumPss(agentPid) / MIB]);
    await purge(drover.bench, "many");
  }
  for (const peer of ONLY_CACHED ? [] : peers) {
    const ms = await timed(() => inParallel(MANY, PEER_PARALLEL, () => peer.run(small)));
    await sleep(SETTLE_MS);
    const helpers = peer.helperPids();
    const daemons = peer.daemonPids();
    many.push([peer.name, ms, sumPss(helpers) / MANY / MIB, `${helpers.length} (${peer.name.startsWith("Docker") ? "containerd-shim" : "conmon"})`, daemons.length > 0 ? sumPss(daemons) / MIB : "none"]);
    await peer.removeAll();
  }

  const date = new Date().toISOString().slice(0, 10);
  const loadAfter = loadavg();
  console.log(`bench/docker.ts, ${date}; ${machineLine()}`);
  console.log(`load average (1, 5, 15 min): before ${loadBefore.map((l) => l.toFixed(2)).join(" ")}, after ${loadAfter.map((l) => l.toFixed(2)).join(" ")}`);
  for (const line of skipped) console.log(`skipped ${line}`);
  const docker = peers.find((peer) => peer.name.startsWith("Docker"));
  const ratio = (ours: number, theirs: number | undefined) => (theirs === undefined ? "n/a" : (ours / theirs).toFixed(2));
  const droverStart = median(starts["drover (compiled agent)"]!);
  printTable(
    `Cached image to running, ${RUNS} runs interleaved (goal: drover <= 0.5 x Docker)`,
    ["runtime", "p50 ms", "min ms", "max ms", "drover / this"],
    Object.entries(starts).map(([name, times]) => [name, median(times), Math.min(...times), Math.max(...times), name.startsWith(NODE_SHARE) ? "" : ratio(droverStart, median(times))]),
  );
  if (!ONLY_CACHED) {
    printTable(
      `${MANY} containers of one image to all running; helper memory per running container (PSS; goal: drover <= 1 MiB)`,
      ["runtime", `${MANY} running, ms`, "helper PSS MiB/container", "helper processes", "agent or daemons PSS MiB (shared by all)"],
      many,
    );
    const skopeo = median(pulls["skopeo copy (download only)"]!);
    printTable(
      `Pull of a ${BIG_BYTES / MIB} MiB image (one layer) from docker-registry on 127.0.0.1, pull + unpack, ${PULL_RUNS} runs interleaved (goal: drover >= 0.8 x skopeo's speed)`,
      ["puller", "p50 ms", "min ms", "speed vs skopeo"],
      Object.entries(pulls).map(([name, times]) => [name, median(times), Math.min(...times), (skopeo / median(times)).toFixed(2)]),
    );
    printTable(
      `Disk used with ${DISK_TASKS} running containers of the ${BIG_BYTES / MIB} MiB image (du -skx of the whole store; goal: one copy)`,
      ["runtime", "MiB", "vs Docker"],
      disk.map(([name, mib]) => [name, mib, name.startsWith(" ") ? "" : ratio(mib, disk.find(([peer]) => peer === docker?.name)?.[1])]),
    );
  }
} finally {
  for (const stop of stops.reverse()) await stop().catch((err) => console.error(`clean-up: ${(err as Error).message}`));
  registry?.stop();
  rmSync(base, { recursive: true, force: true });
}
