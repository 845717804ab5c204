/**
 * The `drover logmon` role: one process per host moving every registered
 * task's stdout/stderr FIFOs into rotated log files. The agent's supervisor
 * (src/client/logmon/supervisor.ts) starts it in its own session, so it
 * outlives an agent restart, and starts another if it dies.
 *
 *   start ─► take the host lock (waiting out a dying predecessor)
 *         ─► resume saved registrations ─► pump ─► listen on the socket
 *   SIGTERM / SIGINT ─► flush every task ─► remove the socket ─► exit 0
 *   SIGKILL ─► nothing lost: unmoved bytes wait in the pipes, which the tasks'
 *              executors keep open, for the next logmon
 *
 *   drover logmon --state-dir DIR --socket PATH
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { RpcClient } from "../rpc/client.ts";
import { agentSideOnly } from "../rpc/peer-check.ts";
import { serveRpc } from "../rpc/server.ts";
import { removeIfPresent } from "../lib/remove-file.ts";
import { VERSION } from "../lib/version.ts";
import { SettledCollector } from "../runtime/gc.ts";
import { CpuWeight } from "./cpu-weight.ts";
import { acquireLock, LOCK_FILE } from "./lock.ts";
import { errorText, log } from "./log.ts";
import { Scratch } from "./log-stream.ts";
import { Logmon } from "./logmon.ts";
import { LOGMON_PROTOCOL } from "./protocol.ts";
import { Pump } from "./pump.ts";
import { Registrations, REGISTRATIONS_FILE } from "./registrations.ts";

/**
 * How long a new logmon waits for the lock: a SIGKILLed predecessor drops it
 * as soon as the kernel reaps it, a SIGTERMed one after its last flush.
 */
const LOCK_WAIT_MS = 5_000;
/** How long a logmon holding the lock may take to answer before it counts as not serving. */
const RIVAL_PROBE_TIMEOUT_MS = 1_000;

/**
 * How often registered tasks are checked for deleted FIFOs (an alloc dir
 * destroyed without a deregister): their open log files pin disk space
 * until then.
 */
const SWEEP_INTERVAL_MS = 30_000;

/**
 * How long after the last registration change the logmon collects its
 * garbage in full (SettledCollector): an agent registers a node's tasks in
 * one burst, whose requests, answers and journal lines are garbage once it
 * is over, and an idle logmon would otherwise hold that heap for as long as
 * it runs.
 */
const SETTLED_COLLECT_MS = 2_000;

export async function main(argv: readonly string[]): Promise<number> {
  let stateDir: string;
  let socketPath: string;
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: { "state-dir": { type: "string" }, socket: { type: "string" } },
      strict: true,
    });
    if (!values["state-dir"] || !values.socket) throw new Error("--state-dir and --socket are required");
    stateDir = values["state-dir"];
    socketPath = values.socket;
  } catch (err) {
    console.error(`drover logmon: ${errorText(err)}`);
    return 2;
  }

  // Keeps no directory of the agent's busy; the paths above are absolute.
  process.chdir("/");
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const lockPath = join(stateDir, LOCK_FILE);
  // Two agents' restarts can race; the loser leaves as soon as the winner serves.
  const lock = await acquireLock(lockPath, LOCK_WAIT_MS, () => anotherLogmonAnswers(socketPath));
  if (lock === "yielded") {
    log("info", "another logmon serves this host; exiting", { stateDir });
    return 0;
  }
  if (lock === "busy") {
    log("error", "another logmon holds the lock; exiting", { stateDir });
    return 1;
  }

  const stopSignal = new Promise<NodeJS.Signals>((resolve) => {
    for (const name of ["SIGTERM", "SIGINT"] as const) process.on(name, () => resolve(name));
    // Detached from any terminal already; a stray hangup must not end the log pump.
    process.on("SIGHUP", () => {});
  });

  const pump = new Pump();
  const weight = new CpuWeight();
  const logmon = new Logmon(new Registrations(join(stateDir, REGISTRATIONS_FILE)), pump, new Scratch(), (tasks) => weight.follow(tasks));
  logmon.resume();
  const collector = new SettledCollector(SETTLED_COLLECT_MS);
  collector.touch();

  // The lock is ours, so a socket file left here is a dead logmon's.
  removeIfPresent(socketPath);
  const server = serveRpc(
    socketPath,
    LOGMON_PROTOCOL,
    {
      register: (task) => (collector.touch(), logmon.register(task)),
      registerBatch: ({ tasks }) => (collector.touch(), logmon.registerBatch(tasks)),
      deregister: ({ id }) => (collector.touch(), logmon.deregister(id)),
      flush: ({ id }) => logmon.flush(id),
      version: () => ({ version: VERSION, pid: process.pid, tasks: logmon.taskCount }),
    },
    {},
    agentSideOnly((why) => log("warn", "refused a connection", { why })),
  );
  log("info", "listening", { socket: socketPath, pid: process.pid, version: VERSION });
  const sweeper = setInterval(() => void logmon.sweep(), SWEEP_INTERVAL_MS);

  const signal = await stopSignal;
  log("info", "stopping", { signal });
  clearInterval(sweeper);
  collector.stop();
  server.stop();
  logmon.shutdown();
  removeIfPresent(socketPath);
  return 0;
}

async function anotherLogmonAnswers(socketPath: string): Promise<boolean> {
  try {
    const client = await RpcClient.connect(socketPath, LOGMON_PROTOCOL);
    try {
      await client.call("version", {}, RIVAL_PROBE_TIMEOUT_MS);
      return true;
    } finally {
      client.close();
    }
  } catch {
    return false;
  }
}

