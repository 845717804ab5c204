/**
 * Interactive `alloc exec` with the compiled binary:
 *
 *   round trip   `<client> alloc exec -i=false <alloc> echo hi`, from the
 *                client's start to its exit, beside a plain spawn of
 *                `echo hi` (the floor) in the same run. Clients: Nomad
 *                0.12.12's CLI (where ../shared/nomad is), drover's CLI, and
 *                a websocket opened by this script (the agent's share,
 *                without any CLI start-up); into a raw_exec and an exec task.
 *   stream       a session's stdout of STREAM_MIB MiB to a websocket client,
 *                beside the same bytes read straight from a pipe (the floor).
 *   design       why the agent takes a session's stdio over from the
 *                executor instead of the executor relaying the bytes: the
 *                same stream through one more Bun process with the
 *                executor's engine settings (what a relay would add), that
 *                process's memory growth while it relays, and the real
 *                executor's growth after interactive sessions beside its
 *                growth after as many non-interactive execs.
 *
 *   bun bench/alloc-exec.ts [runs]
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectIsolation } from "../src/nsenter/detect.ts";
import { IDLE_ROLE_ENGINE_ENV } from "../src/runtime/spawn.ts";
import { pidsWithCmdline, sleep } from "../test/helpers/index.ts";
import { NOMAD_BINARY, nomadMissing } from "../test/helpers/nomad.ts";
import { ensureBinary } from "../test/helpers/binary.ts";
import { benchAgent, machineLine, median, memoryOf, percentile, printTable } from "./lib.ts";

const RUNS = Number(process.argv[2] ?? 50);
/** Size of the streamed output: large enough that start-up is noise. */
const STREAM_MIB = 256;
/** Sessions run before the executor's memory is read again. */
const SESSIONS_FOR_MEMORY = 20;
/** How often the relay's memory is sampled while it relays. */
const MEMORY_SAMPLE_MS = 20;
/** Time for a task's executor to settle before its memory is read. */
const SETTLE_MS = 1_500;
const MIB = 1024 * 1024;

const binary = ensureBinary();
const bench = await benchAgent("drover-bench-exec-");
const { address, dir } = bench;
const websocketBase = address.replace(/^http/, "ws");
const env = { ...process.env, NOMAD_ADDR: address, DROVER_ADDR: address };

interface Alloc {
  ID: string;
  ClientStatus: string;
  TaskStates?: Record<string, { State: string }>;
}

/** Runs a one-task `sleep` job `id` with `driver`; returns its alloc once running. */
async function sleepingAlloc(id: string, driver: string): Promise<string> {
  const job = { Job: { ID: id, Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: driver, Config: { command: "/bin/sleep", args: ["3600"] } }] }] } };
  const res = await fetch(`${address}/v1/jobs`, { method: "POST", body: JSON.stringify(job), headers: { "Content-Type": "application/json" } });
  if (!res.ok) throw new Error(`register ${id}: ${res.status} ${await res.text()}`);
  for (;;) {
    const allocs = (await (await fetch(`${address}/v1/job/${id}/allocations`)).json()) as Alloc[];
    const running = allocs.find((a) => a.ClientStatus === "running");
    if (running) return running.ID;
    if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error(`${id}: the alloc failed`);
    await sleep(20);
  }
}

/** The executor of an alloc's task: its argv names its files, which start with the alloc's short id. */
function executorOf(alloc: string): number {
  const [pid] = pidsWithCmdline(`${join(dir, "data", "run")}/${alloc.slice(0, 8)}.`);
  if (pid === undefined) throw new Error(`no executor for alloc ${alloc}`);
  return pid;
}

async function timed(run: () => Promise<unknown>, runs = RUNS): Promise<number[]> {
  await run(); // warm-up, not counted
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times;
}

async function spawnAndRead(argv: string[]): Promise<string> {
  const child = Bun.spawn(argv, { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  if (code !== 0 || out !== "hi\n") throw new Error(`${argv.join(" ")}: exit ${code}, output ${JSON.stringify(out)}, ${await new Response(child.stderr).text()}`);
  return out;
}

/** An exec session over the websocket; returns the exit code and the bytes of stdout it decoded. */
function websocketExec(alloc: string, command: string[]): Promise<{ exitCode: number; bytes: number }> {
  const query = new URLSearchParams({ command: JSON.stringify(command), task: "t", tty: "false" });
  const socket = new WebSocket(`${websocketBase}/v1/client/allocation/${alloc}/exec?${query}`);
  return new Promise((resolve, reject) => {
    let bytes = 0;
    socket.onopen = () => socket.send(JSON.stringify({ stdin: { close: true } }));
    socket.onmessage = (event) => {
      const frame = JSON.parse(String(event.data)) as { stdout?: { data?: string }; exited?: boolean; result?: { exit_code: number } };
      if (frame.stdout?.data) bytes += Buffer.from(frame.stdout.data, "base64").length;
      if (frame.exited) {
        resolve({ exitCode: frame.result?.exit_code ?? -1, bytes });
        socket.close();
      }
    };
    socket.onclose = (event) => reject(new Error(`session closed: ${event.code} ${event.reason}`));
  });
}

/** Reads a child's stdout to its end; returns the bytes read. */
async function drain(stream: ReadableStream<Uint8Array>): Promise<number> {
  let bytes = 0;
  const reader = stream.getReader();
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) bytes += chunk.value.length;
  return bytes;
}

const pss = (pid: number) => memoryOf(pid).pss;

/** The relay a design without the hand-over needs: a Bun process copying its stdin to its stdout, with the executor's engine settings. */
const RELAY_SCRIPT = `
const writer = Bun.stdout.writer();
const reader = Bun.stdin.stream().getReader();
for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) { writer.write(chunk.value); await writer.flush(); }
await writer.end();
`;

const nomadPath = NOMAD_BINARY;

const mbps = (bytes: number, ms: number) => bytes / MIB / (ms / 1000);

const agent = await bench.start();
try {
  const support = await detectIsolation();
  const drivers = support.available ? ["raw_exec", "exec"] : ["raw_exec"];
  if (!support.available) console.log(`exec tasks skipped: ${support.reason}`);
  if (!nomadPath) console.log(`Nomad's CLI skipped: ${nomadMissing}`);
  const allocs: Record<string, string> = {};
  for (const driver of drivers) allocs[driver] = await sleepingAlloc(`${driver}-bench`, driver);

  // Round trips.
  const rows: (string | number)[][] = [];
  const floor = await timed(() => spawnAndRead(["echo", "hi"]));
  rows.push(["plain spawn of `echo hi` (floor)", median(floor), percentile(floor, 99)]);
  for (const driver of drivers) {
    const alloc = allocs[driver]!;
    if (nomadPath) {
      const nomad = await timed(() => spawnAndRead([nomadPath, "alloc", "exec", "-i=false", "-task", "t", alloc, "echo", "hi"]));
      rows.push([`\`nomad alloc exec\` (Nomad 0.12.12 CLI), ${driver}`, median(nomad), percentile(nomad, 99)]);
    }
    const drover = await timed(() => spawnAndRead([binary, "alloc", "exec", "-i=false", "-task", "t", alloc, "echo", "hi"]));
    rows.push([`\`drover alloc exec\`, ${driver}`, median(drover), percentile(drover, 99)]);
    const socket = await timed(() => websocketExec(alloc, ["echo", "hi"]));
    rows.push([`websocket session alone (no CLI), ${driver}`, median(socket), percentile(socket, 99)]);
  }
  printTable(`alloc exec round trip: \`echo hi\` from the client's start to its exit (${RUNS} runs each)`, ["what", "p50 ms", "p99 ms"], rows);

  // Executors' memory: fresh ones; after interactive sessions (or as many non-interactive execs, for comparison); after a stream.
  const sessionAlloc = await sleepingAlloc("memory-sessions", "raw_exec");
  const postAlloc = await sleepingAlloc("memory-post", "raw_exec");
  await sleep(SETTLE_MS);
  const before = { session: pss(executorOf(sessionAlloc)), post: pss(executorOf(postAlloc)) };
  for (let i = 0; i < SESSIONS_FOR_MEMORY; i++) {
    await websocketExec(sessionAlloc, ["echo", "hi"]);
    const res = await fetch(`${address}/v1/client/allocation/${postAlloc}/exec`, { method: "POST", body: JSON.stringify({ Task: "t", Cmd: ["echo", "hi"] }) });
    if (!res.ok) throw new Error(`POST exec: ${res.status} ${await res.text()}`);
  }
  await sleep(SETTLE_MS);
  const after = { session: pss(executorOf(sessionAlloc)), post: pss(executorOf(postAlloc)) };

  // Streaming.
  const streamBytes = STREAM_MIB * MIB;
  const head = ["head", "-c", String(streamBytes), "/dev/zero"];
  let started = performance.now();
  const direct = await drain(Bun.spawn(head, { stdout: "pipe" }).stdout);
  const directMs = performance.now() - started;
  started = performance.now();
  const session = await websocketExec(sessionAlloc, head);
  const sessionMs = performance.now() - started;
  if (session.bytes !== streamBytes || direct !== streamBytes) throw new Error(`stream lost bytes: ${session.bytes}, ${direct} of ${streamBytes}`);

  // The relay the hand-over avoids, and its memory while it relays.
  const relayScript = join(dir, "relay.ts");
  writeFileSync(relayScript, RELAY_SCRIPT);
  const source = Bun.spawn(head, { stdout: "pipe" });
  const relay = Bun.spawn([process.execPath, relayScript], { env: { ...process.env, ...IDLE_ROLE_ENGINE_ENV }, stdin: source.stdout, stdout: "pipe" });
  const idleRelay = await (async () => {
    await sleep(200);
    return pss(relay.pid);
  })();
  let relayPeak = idleRelay;
  const sampler = setInterval(() => {
    try {
      relayPeak = Math.max(relayPeak, pss(relay.pid));
    } catch {
      // Exited between samples.
    }
  }, MEMORY_SAMPLE_MS);
  started = performance.now();
  const relayed = await drain(relay.stdout);
  const relayedMs = performance.now() - started;
  clearInterval(sampler);
  if (relayed !== streamBytes) throw new Error(`relay lost bytes: ${relayed} of ${streamBytes}`);

  printTable(
    `Streaming ${STREAM_MIB} MiB of stdout`,
    ["path", "MB/s"],
    [
      ["pipe read straight by this process (floor)", mbps(direct, directMs)],
      ["alloc exec session: the command's pipe -> agent -> websocket frames -> client", mbps(session.bytes, sessionMs)],
      ["the same pipe through one more Bun process (a relaying executor's hop, alone)", mbps(relayed, relayedMs)],
    ],
  );

  await sleep(SETTLE_MS);
  const streamed = pss(executorOf(sessionAlloc));
  printTable(
    `Memory (PSS MiB; ${drivers.length + 2} executors share the binary's pages, so absolute figures are above the per-task figure of executor-overhead.ts)`,
    ["process", "before", "after", "growth"],
    [
      [`executor: ${SESSIONS_FOR_MEMORY} interactive sessions (stdio handed over)`, before.session / MIB, after.session / MIB, (after.session - before.session) / MIB],
      [`the same executor: then a session streaming ${STREAM_MIB} MiB`, after.session / MIB, streamed / MIB, (streamed - after.session) / MIB],
      [`executor: ${SESSIONS_FOR_MEMORY} non-interactive execs (output collected by the executor)`, before.post / MIB, after.post / MIB, (after.post - before.post) / MIB],
      [`a relaying Bun process (idle -> peak while relaying ${STREAM_MIB} MiB)`, idleRelay / MIB, relayPeak / MIB, (relayPeak - idleRelay) / MIB],
    ],
  );
  console.log(machineLine());
} finally {
  agent.kill("SIGKILL");
  await agent.exited;
  await bench.cleanUp();
}
