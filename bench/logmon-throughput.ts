/**
 * Log throughput: a task writes 1 GiB of 100-byte lines into its stdout FIFO,
 * rotated at 10 MB (10 files kept). The logmon (the compiled binary, and
 * drover on Deno) beside, in the same run and through the same writer:
 *   - `cat fifo > file`  the floor: one reader, no rotation
 *   - svlogd (runit) and s6-log (s6), each rotating at 10 MB, 10 files
 * End to end, in the same rounds: a raw_exec task run by the compiled agent
 * writes 1 GiB of 100-byte lines to its stdout (`yes | head -c`), through its
 * FIFO and the agent's logmon into 10 MB files, timed from the task's first
 * instruction to a marker line landing in the live file; beside it the same
 * `yes | head -c` into a FIFO drained by `cat > file` (the floor), and, with
 * `--baseline-binary PATH`, the same task under an older build's agent.
 * Every row carries the 1-minute load average seen at its samples.
 * Many tasks (`aggregate`): 20 tasks at once, the GiB split between them,
 * through each logmon, beside 20 cats, each row with its writers' own CPU per
 * GiB: equal in both rows, the reader costs its tasks nothing beyond its own
 * CPU (no wait on a pipe's lock, no extra wake-ups). Fairness (`fairness`): each logmon's
 * delay for a quiet task's lines while five tasks write flat out.
 * Then the logmon's CPU seconds per GiB, and its memory (RSS/PSS) and idle
 * CPU with 100 idle tasks registered, and its RPC round trip.
 * Anchor quoted in the issue (not measured here): Nomad 0.12's logmon,
 * 1 GiB in 2.76 s (≈ 390 MB/s) on this kind of machine.
 *
 *   bun bench/logmon-throughput.ts [--gib N] [--rounds N] [--dir DIR] [--baseline-binary PATH]
 *     [--rotate-mb N] [--keep-files N] [--disk-limit filesystem|poll] [--pin]
 *     [--readers cat,logmon,logmon-deno,svlogd,s6-log,cat-yes,task,aggregate,fairness]
 *
 * The writer is this script again (`--write FIFO BYTES [--spare]`): it holds a
 * spare read-write descriptor when the reader is the logmon, as the executor
 * does, and sets the 1 MiB pipe; then it hands the pipe 65,500-byte chunks
 * with vmsplice(2), through bun:ffi. Why not write(2): a Bun process
 * writeSync-ing those chunks capped the pump-alone rows near 1.8-1.9 GB/s
 * whatever the reader (on a quiet machine cat 1675 MB/s, the pump 1572; a C
 * write() loop into cat 1786-1890), so no reader could show 1.3 × cat.
 * vmsplice maps the chunk's pages into the pipe without copying them (the
 * chunk is never changed afterwards, as vmsplice asks); with a C vmsplice
 * writer cat moved 2.3-2.5 GB/s. The chunk is page-aligned: unaligned, cat
 * spent 2.1 CPU s per GiB reading it instead of 0.4. Both readers of a row
 * get this same writer, timed from its first byte (docs/performance.md, Logs).
 */
import { closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { detectCgroups } from "../src/cgroups/detect.ts";
import { removeDir } from "../src/cgroups/files.ts";
import { parentCgroupDirs } from "../src/cgroups/paths.ts";
import { parseArgs } from "node:util";
import { dlopen, FFIType, ptr } from "bun:ffi";
import { LogmonClient } from "../src/client/logmon/client.ts";
import { createTaskFifos, enlargePipe, openFifo } from "../src/log-layout/fifo.ts";
import { mkfifo } from "../src/runtime/libc.ts";
import { LogmonSupervisor } from "../src/client/logmon/supervisor.ts";
import { droverRuntime, droverRuntimes, type DroverRuntime } from "../test/helpers/runtimes.ts";
import { benchAgent, cpuSeconds, machineLine, median, onBenchFailure, pagesAllocated, parseSmapsRollup, percentile, printTable, type BenchAgent } from "./lib.ts";
import { logFileIndexes, stageFifoPath } from "../src/log-layout/layout.ts";
import { sleep, waitFor } from "../test/helpers/index.ts";
import { DEFAULT_LOG_MAX_FILE_SIZE_MB, DEFAULT_LOG_MAX_FILES } from "../src/lib/log-config.ts";

const LINE = `${"x".repeat(99)}\n`;
/** 655 lines: a write of about the size a buffered task makes. */
const CHUNK = Buffer.from(LINE.repeat(655));
/** The writer's chunk starts on a page: vmsplice'd from mid-page, cat spent 2.1 CPU s per GiB reading it instead of 0.4. */
const PAGE_BYTES = 4096;
const GiB = 1024 ** 3;

const { values } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    write: { type: "string" },
    bytes: { type: "string" },
    spare: { type: "boolean", default: false },
    gib: { type: "string", default: "1" },
    rounds: { type: "string", default: "3" },
    dir: { type: "string", default: tmpdir() },
    "idle-tasks": { type: "string", default: "100" },
    readers: { type: "string", default: "cat,logmon,logmon-deno,svlogd,s6-log,cat-yes,task,aggregate,fairness" },
    "baseline-binary": { type: "string" },
    "rotate-mb": { type: "string", default: "10" },
    "keep-files": { type: "string", default: "10" },
    "disk-limit": { type: "string" },
    pin: { type: "boolean", default: false },
  },
});

/** Rotation, for every reader that rotates (10 MB, 10 files kept); `--rotate-mb 2000 --keep-files 1` measures without rotating. */
const ROTATE_BYTES = Number(values["rotate-mb"]) * 1024 * 1024;
const KEEP_FILES = Number(values["keep-files"]);
/** The task rows' agent's client.disk_limit (its default, "filesystem", puts the logs in the alloc's disk image; "poll" on the host's file system). */
const DISK_LIMIT = values["disk-limit"];

if (values.write) {
  writer(values.write, Number(values.bytes), values.spare);
  process.exit(0);
}

function writer(fifo: string, total: number, spare: boolean): void {
  if (spare) {
    enlargePipe(openFifo(fifo, "spare"));
    holdStages([fifo]);
  }
  const fd = openFifo(fifo, "writer");
  enlargePipe(fd);
  const { vmsplice } = dlopen("libc.so.6", { vmsplice: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.u32], returns: FFIType.i64 } }).symbols;
  // One iovec {base, length}, rewritten per call: the chunk stays put, so its pages may sit in the pipe.
  const iovec = new BigUint64Array(2);
  const backing = Buffer.alloc(CHUNK.length + PAGE_BYTES);
  const chunk = backing.subarray(PAGE_BYTES - (ptr(backing) % PAGE_BYTES));
  CHUNK.copy(chunk);
  const base = BigInt(ptr(chunk));
  // The rows are timed from here: both readers are open by now (the FIFO's open waits for cat), and
  // the writer's own start-up (30-40 ms of Bun's) is no reader's time.
  process.stdout.write(`${performance.timeOrigin + performance.now()}\n`);
  for (let written = 0; written < total; ) {
    const offset = written % CHUNK.length;
    iovec[0] = base + BigInt(offset);
    iovec[1] = BigInt(Math.min(CHUNK.length - offset, total - written));
    const moved = Number(vmsplice(fd, ptr(iovec), 1, 0));
    if (moved < 0) throw new Error(`vmsplice into ${fifo} failed`);
    written += moved;
  }
  closeSync(fd);
}

const TOTAL = Math.round(Number(values.gib) * GiB);
const ROUNDS = Number(values.rounds);
const IDLE_TASKS = Number(values["idle-tasks"]);
const root = mkdtempSync(join(values.dir, "drover-bench-logmon-"));

/**
 * The bench's writer for the pump-alone rows, cat's and the logmon's alike, in
 * the floor writer's cgroup (below), where a task's writer sits: never in its
 * reader's session. With autogroups a session weighs as one process, and a
 * writer sharing cat's let cat's row run on one group's turns: at load 12-14,
 * 8 paired samples, cat in the writer's session moved 1373 MB/s (median), cat
 * in a session of its own (as the logmon is) 760.
 */
function startWriter(fifo: string, spare: boolean) {
  const argv = [process.execPath, import.meta.path, "--write", fifo, "--bytes", String(TOTAL)];
  if (spare) argv.push("--spare");
  return Bun.spawn(["sh", "-c", `${joinWriterCgroup()}exec "$@"`, "sh", ...argv], { stdout: "pipe", stderr: "inherit" });
}

/**
 * Spare ends of the FIFOs' staging FIFOs, held as a task's executor holds
 * them: the logmon moves a stream through its stage only while another
 * process holds it. Closed when this process exits, or by the caller.
 */
function holdStages(fifos: string[]): number[] {
  return fifos.map((fifo) => openFifo(stageFifoPath(fifo), "spare"));
}

/** Waits for the bench's writer to end; returns when it began writing (epoch ms, as `now()` gives it). */
async function writerDone(write: ReturnType<typeof startWriter>): Promise<number> {
  const [code, printed] = await Promise.all([write.exited, new Response(write.stdout).text()]);
  if (code !== 0) throw new Error(`the writer failed (exit ${code})`);
  return Number(printed.trim());
}

/** Epoch milliseconds with performance.now()'s resolution, comparable across processes. */
const now = () => performance.timeOrigin + performance.now();

interface Sample {
  seconds: number;
  cpuSeconds: number;
  /** The writers' own CPU (`yes` and `head`, through their shell's wait), where a row has many: what a reader's wake-ups and locks cost its tasks. */
  writerCpuSeconds?: number;
  /** 1-minute load average when the sample ended: the machine is shared. */
  load: number;
  /** Pages the machine allocated during the sample (set by the round loop). */
  pages?: number;
}

const loadAverage = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);

/**
 * The floor's writer sits where a task's does, in a cpu cgroup two levels
 * down (the agent's parent, then the task's), at the same weight: on a machine
 * shared with other work, a cgroup competes as one entity against every
 * process at the root, so a writer at the root would get more CPU than the task.
 */
const FLOOR_CGROUP_PARENT = `drover-bench-floor-${process.pid}`;
const FLOOR_WRITER_CGROUPS = parentCgroupDirs(detectCgroups(), FLOOR_CGROUP_PARENT)
  .filter((dir) => /\/cpu[,/]|\.slice$/.test(dir))
  .map((dir) => join(dir, "writer"));
for (const dir of FLOOR_WRITER_CGROUPS) mkdirSync(dir, { recursive: true });
// A failed run (the agents' tasks and logmons outlive this process by design) ends them and leaves nothing.
onBenchFailure(() => {
  removeFloorCgroups();
  rmSync(root, { recursive: true, force: true });
});
/** Shell commands that move the shell into the floor writer's cgroups. */
const joinWriterCgroup = () => FLOOR_WRITER_CGROUPS.map((dir) => `echo $$ > '${dir}/cgroup.procs'; `).join("");
const removeFloorCgroups = () => {
  for (const dir of FLOOR_WRITER_CGROUPS) for (const path of [dir, dirname(dir)]) removeDir(path);
};

/** `yes | head -c`, as a task's shell writes it: 8 KiB writes from a process that is itself fed by a pipe. */
const yesCommand = (bytes: number) => `yes '${LINE.slice(0, -1)}' | head -c ${bytes}`;

/**
 * `--pin`, for the end-to-end rows: the writer pair on WRITER_CPU, the reader
 * (cat, or the agent's logmon with all its threads) on READER_CPU. Unpinned,
 * where the scheduler puts the three moves either row by 10-20 % from round
 * to round; pinned, rounds agree within 1-2 % and what is left is what the
 * reader costs its writer (docs/performance.md, "The writer's pages").
 */
const PIN = values.pin;
const WRITER_CPU = 0;
const READER_CPU = 1;
const pinned = (cpu: number, command: string) => (PIN ? `taskset -c ${cpu} ${command}` : command);
/** The end-to-end rows' writer, pinned under --pin. */
const endToEndYes = (bytes: number) => `${pinned(WRITER_CPU, `yes '${LINE.slice(0, -1)}'`)} | ${pinned(WRITER_CPU, `head -c ${bytes}`)}`;

/** A peer that reads the FIFO on stdin until EOF: time from the writer's start to the peer's exit. */
async function peerRun(name: string, command: (fifo: string, out: string) => string, shellWriter = false): Promise<Sample> {
  const dir = join(root, `${name}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const fifo = createTaskFifos(dir, "task").stdout;
  const out = join(dir, "out");
  mkdirSync(out);
  writeFileSync(join(out, "config"), `s${ROTATE_BYTES}\nn${KEEP_FILES}\n`);
  let started = now();
  const peer = Bun.spawn(["sh", "-c", command(fifo, out)], { stdout: "inherit", stderr: "inherit" });
  if (shellWriter) {
    const write = Bun.spawn(["sh", "-c", `${joinWriterCgroup()}${endToEndYes(TOTAL)} > '${fifo}'`], { stdout: "inherit", stderr: "inherit" });
    if ((await write.exited) !== 0) throw new Error(`${name}: the writer failed`);
  } else {
    started = await writerDone(startWriter(fifo, false));
  }
  const peerCode = await peer.exited;
  const seconds = (now() - started) / 1000;
  if (peerCode !== 0) throw new Error(`${name}: exit ${peerCode}`);
  const cpu = peer.resourceUsage()?.cpuTime;
  rmSync(dir, { recursive: true, force: true });
  return { seconds, cpuSeconds: cpu ? Number(cpu.total) / 1e6 : Number.NaN, load: loadAverage() };
}

interface AtRest {
  baseline: Memory;
  loaded: Memory;
  idleCpu: number;
  rtt: number;
}

interface Memory {
  rssKiB: number;
  pssKiB: number;
  pssAnonKiB: number;
}

/**
 * A logmon on one runtime, started by the agent's own supervisor (it waits as
 * long as a cold start takes). Every figure is read from that one process.
 */
class BenchLogmon {
  private runs = 0;

  private constructor(
    readonly runtime: DroverRuntime,
    readonly supervisor: LogmonSupervisor,
    readonly client: LogmonClient,
    readonly pid: number,
  ) {}

  static async start(runtime: DroverRuntime): Promise<BenchLogmon> {
    const stateDir = join(root, `logmon-${runtime.name}`);
    mkdirSync(stateDir);
    const supervisor = new LogmonSupervisor({ stateDir, drover: runtime.argv });
    onBenchFailure(() => supervisor.terminate());
    const client = new LogmonClient(supervisor);
    return new BenchLogmon(runtime, supervisor, client, (await client.version()).pid);
  }

  /** A /proc file of the logmon measured; a logmon restarted mid-run would mix two processes' figures. */
  private procFile(name: string): string {
    if (this.supervisor.logmonPid !== this.pid) {
      throw new Error(`the logmon was restarted during the run (pid ${this.pid} -> ${this.supervisor.logmonPid ?? "none"}): see ${this.supervisor.logFile}`);
    }
    try {
      return readFileSync(`/proc/${this.pid}/${name}`, "utf8");
    } catch (err) {
      throw new Error(`the logmon (pid ${this.pid}) is gone: ${(err as Error).message}; see ${this.supervisor.logFile}`);
    }
  }

  cpuSeconds(): number {
    return cpuSeconds(this.pid);
  }

  memory(): Memory {
    const { rss, pss, anon } = parseSmapsRollup(this.procFile("smaps_rollup"));
    return { rssKiB: rss / 1024, pssKiB: pss / 1024, pssAnonKiB: anon / 1024 };
  }

  /** At rest with many tasks, each with its FIFOs held open here as its executor would hold them: memory, idle CPU, RPC round trip. */
  async atRest(): Promise<AtRest> {
    const baseline = this.memory();
    const spares: number[] = [];
    for (let i = 0; i < IDLE_TASKS; i++) {
      const dir = join(root, `idle-${this.runtime.name}`, `a${i}`);
      const fifos = createTaskFifos(dir, "task");
      spares.push(openFifo(fifos.stdout, "spare"), openFifo(fifos.stderr, "spare"), ...holdStages([fifos.stdout, fifos.stderr]));
      await this.client.register({ id: `idle-${i}`, logDir: dir, taskName: "task", maxFiles: DEFAULT_LOG_MAX_FILES, maxFileSizeMB: DEFAULT_LOG_MAX_FILE_SIZE_MB });
    }
    const IDLE_SECONDS = 10;
    const idleCpuBefore = this.cpuSeconds();
    await Bun.sleep(IDLE_SECONDS * 1000);
    const idleCpu = (this.cpuSeconds() - idleCpuBefore) / IDLE_SECONDS;
    const loaded = this.memory();
    const rtts: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      await this.client.version();
      rtts.push(performance.now() - started);
      await Bun.sleep(3);
    }
    for (let i = 0; i < IDLE_TASKS; i++) await this.client.deregister(`idle-${i}`);
    for (const fd of spares) closeSync(fd);
    return { baseline, loaded, idleCpu, rtt: median(rtts) };
  }

  async run(): Promise<Sample> {
    const dir = join(root, `logmon-${this.runtime.name}-${this.runs++}`);
    const fifo = createTaskFifos(dir, "task").stdout;
    const id = `bench-${this.runs}`;
    await this.client.register({ id, logDir: dir, taskName: "task", maxFiles: KEEP_FILES, maxFileSizeMB: ROTATE_BYTES / 2 ** 20 });
    const cpuBefore = this.cpuSeconds();
    const started = await writerDone(startWriter(fifo, true));
    await this.client.flush(id);
    const seconds = (now() - started) / 1000;
    const cpu = this.cpuSeconds() - cpuBefore;
    await this.client.deregister(id);
    rmSync(dir, { recursive: true, force: true });
    return { seconds, cpuSeconds: cpu, load: loadAverage() };
  }

  /** AGGREGATE_TASKS tasks at once, each writing its share of the total (`yes | head -c`): until every byte is in the files. */
  async runMany(): Promise<Sample> {
    const tasks = Array.from({ length: AGGREGATE_TASKS }, (_, i) => {
      const dir = join(root, `many-${this.runtime.name}-${this.runs}-${i}`);
      return { id: `many-${this.runs}-${i}`, dir, fifo: createTaskFifos(dir, "task").stdout };
    });
    this.runs++;
    const stages = holdStages(tasks.map((task) => task.fifo));
    for (const task of tasks) {
      await this.client.register({ id: task.id, logDir: task.dir, taskName: "task", maxFiles: KEEP_FILES, maxFileSizeMB: ROTATE_BYTES / 2 ** 20 });
    }
    const cpuBefore = this.cpuSeconds();
    const started = performance.now();
    const writers = tasks.map((task) => Bun.spawn(["sh", "-c", `${yesCommand(Math.round(TOTAL / AGGREGATE_TASKS))} > '${task.fifo}'`]));
    if ((await Promise.all(writers.map((writer) => writer.exited))).some((code) => code !== 0)) throw new Error("a writer failed");
    for (const task of tasks) await this.client.flush(task.id);
    const seconds = (performance.now() - started) / 1000;
    const cpu = this.cpuSeconds() - cpuBefore;
    for (const task of tasks) {
      await this.client.deregister(task.id);
      rmSync(task.dir, { recursive: true, force: true });
    }
    for (const fd of stages) closeSync(fd);
    return { seconds, cpuSeconds: cpu, writerCpuSeconds: childrenCpuSeconds(writers), load: loadAverage() };
  }

  /**
   * Fairness: while FLOODERS tasks write flat out (`yes | head -c`), a quiet
   * task writes one line every QUIET_GAP_MS; each line's delay from its write
   * to its last byte in the quiet task's file (watched every millisecond or
   * so from here, so the figure includes this process's own scheduling).
   */
  async fairness(): Promise<Fairness> {
    const tasks = Array.from({ length: FLOODERS + 1 }, (_, i) => {
      const dir = join(root, `fair-${this.runtime.name}-${this.runs}-${i}`);
      return { id: `fair-${this.runs}-${i}`, dir, fifo: createTaskFifos(dir, "task").stdout };
    });
    this.runs++;
    const stages = holdStages(tasks.map((task) => task.fifo));
    for (const task of tasks) {
      await this.client.register({ id: task.id, logDir: task.dir, taskName: "task", maxFiles: KEEP_FILES, maxFileSizeMB: ROTATE_BYTES / 2 ** 20 });
    }
    const quiet = tasks.at(-1)!;
    const quietFd = openFifo(quiet.fifo, "writer");
    const liveFd = openSync(join(quiet.dir, "task.stdout.0"), "r");
    const flooders = tasks.slice(0, -1).map((task) => Bun.spawn(["sh", "-c", `${yesCommand(FLOOD_BYTES)} > '${task.fifo}'`]));
    const delays: number[] = [];
    let expected = 0;
    const load = loadAverage();
    for (let i = 0; i < QUIET_LINES; i++) {
      const line = Buffer.from(`quiet line ${i} ${"q".repeat(80)}\n`);
      writeSync(quietFd, line);
      const written = performance.now();
      expected += line.length;
      while (fstatSync(liveFd).size < expected) await sleep(1);
      delays.push(performance.now() - written);
      await sleep(QUIET_GAP_MS);
    }
    // Their `yes` and `head` end on SIGPIPE once the deregistrations below close the FIFOs' only reader.
    for (const flooder of flooders) flooder.kill();
    await Promise.all(flooders.map((flooder) => flooder.exited));
    closeSync(quietFd);
    closeSync(liveFd);
    for (const task of tasks) {
      await this.client.deregister(task.id);
      rmSync(task.dir, { recursive: true, force: true });
    }
    for (const fd of stages) closeSync(fd);
    return { p50: percentile(delays, 50), p99: percentile(delays, 99), max: Math.max(...delays), load };
  }
}

/** The many-task row: this many tasks at once, the total split between them, beside as many cats. */
const AGGREGATE_TASKS = 20;

/** AGGREGATE_TASKS cats, each draining one FIFO fed by `yes | head -c` its share: until every cat is done. */
async function manyCats(): Promise<Sample> {
  const dir = join(root, `many-cat-${Date.now()}`);
  const pairs = Array.from({ length: AGGREGATE_TASKS }, (_, i) => {
    const fifo = createTaskFifos(join(dir, String(i)), "task").stdout;
    return { fifo, out: join(dir, String(i), "out") };
  });
  const cats = pairs.map(({ fifo, out }) => Bun.spawn(["sh", "-c", `exec cat '${fifo}' > '${out}'`]));
  // The clock starts with every cat waiting in its FIFO's open, as the logmon row's starts with
  // every FIFO registered: spawning 20 cats took 20-70 ms at load 16-19, the floor's time, not its bytes'.
  await waitFor("the cats at their FIFOs", () => cats.every((cat) => waitingCat(cat.pid)), { intervalMs: 1 });
  const started = performance.now();
  const writers = pairs.map(({ fifo }) => Bun.spawn(["sh", "-c", `${yesCommand(Math.round(TOTAL / AGGREGATE_TASKS))} > '${fifo}'`]));
  const codes = await Promise.all([...cats, ...writers].map((child) => child.exited));
  const seconds = (performance.now() - started) / 1000;
  if (codes.some((code) => code !== 0)) throw new Error("a cat or a writer failed");
  rmSync(dir, { recursive: true, force: true });
  return { seconds, cpuSeconds: childrenCpuSeconds(cats), writerCpuSeconds: childrenCpuSeconds(writers), load: loadAverage() };
}

/** True once `pid` runs cat and sleeps: before its FIFO has a writer, only in that FIFO's open. */
function waitingCat(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) === "cat" && stat[stat.lastIndexOf(")") + 2] === "S";
}

/** CPU seconds of exited children, each with the descendants it waited for (a shell's pipeline). */
const childrenCpuSeconds = (children: Bun.Subprocess[]) =>
  children.reduce((sum, child) => sum + Number(child.resourceUsage()?.cpuTime.total ?? Number.NaN) / 1e6, 0);

/** Tasks writing flat out beside the quiet one, each up to FLOOD_BYTES (stopped once the quiet lines are done). */
const FLOODERS = 5;
const FLOOD_BYTES = 4 * GiB;
const QUIET_LINES = 200;
const QUIET_GAP_MS = 10;

interface Fairness {
  p50: number;
  p99: number;
  max: number;
  load: number;
}

/** The line a task prints after its GiB: once it ends the live file, every byte before it has landed. */
const DONE_MARKER = "drover-bench-done";
/** How often the live file's tail is read for the marker: small next to a GiB's second. */
const MARKER_POLL_MS = 2;
/** The warm-up job's bytes: enough for a line of every kind the measured runs write, far from a rotation. */
const WARM_UP_BYTES = 1024 * 1024;
const TASK = "t";

/**
 * A raw_exec task under a real agent (the compiled binary, or an older build's),
 * its logs through the agent's own logmon, rotated at 10 MB, 10 files kept.
 */
class BenchTask {
  private runs = 0;

  private constructor(
    readonly agent: BenchAgent,
    private readonly stopAgent: () => void,
  ) {}

  static async start(binary: string, name: string): Promise<BenchTask> {
    const agent = await benchAgent(`drover-bench-logs-${name}-`, DISK_LIMIT ? { disk_limit: DISK_LIMIT } : {}, { runtime: { name, argv: [binary] } });
    const process = await agent.start();
    const task = new BenchTask(agent, () => process.kill("SIGTERM"));
    // A short job first: the agent then has its logmon (started with a first task) and the
    // ephemeral disk's image template before any measured run, as it has after the first.
    await task.run(WARM_UP_BYTES);
    const logmon = task.logmonPid();
    if (PIN) {
      if (logmon === null) throw new Error("--pin: the agent's logmon was not found after the warm-up job");
      if (Bun.spawnSync(["taskset", "-a", "-p", "-c", String(READER_CPU), String(logmon)], { stdout: "ignore" }).exitCode !== 0) throw new Error(`--pin: taskset of the logmon (pid ${logmon}) failed`);
    }
    return task;
  }

  /** The logmon this agent started (with its first task): the process whose command line is a logmon under the agent's dir. */
  private logmonPid(): number | null {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
        if (argv[1] === "logmon" && argv.some((arg) => arg.startsWith(this.agent.dir))) return Number(entry);
      } catch {
        // Gone while we looked.
      }
    }
    return null;
  }

  /**
   * While the task writes, this process sleeps on a FIFO the task writes to
   * once its writer is done (a blocking `cat`, as the floor's wait is), and
   * only then polls the live file for the marker: a poll of the log dir
   * every MARKER_POLL_MS for the whole run took ~5 % of a core from the
   * machine it measured, where the floor's run has no poller.
   */
  async run(bytes = TOTAL): Promise<Sample> {
    const id = `logs-${this.runs++}`;
    const wrote = join(root, `${id}-wrote-${Date.now()}`);
    if (mkfifo(wrote, 0o600) !== 0) throw new Error(`mkfifo ${wrote} failed`);
    const writerDone = Bun.spawn(["cat", wrote], { stdout: "pipe", stderr: "inherit" });
    try {
      return await this.measure(id, bytes, wrote, writerDone);
    } finally {
      writerDone.kill();
      rmSync(wrote, { force: true });
    }
  }

  private async measure(id: string, bytes: number, wrote: string, writerDone: Bun.Subprocess<"ignore", "pipe", "inherit">): Promise<Sample> {
    const script = `date +%s%N > "$NOMAD_TASK_DIR/started"; ${endToEndYes(bytes)}; echo; echo ${DONE_MARKER}; echo "$NOMAD_ALLOC_DIR" > '${wrote}'; exec sleep 3600`;
    const body = JSON.stringify({
      Job: {
        ID: id,
        Type: "service",
        Datacenters: ["dc1"],
        TaskGroups: [
          {
            Name: "g",
            Count: 1,
            // Room for the logs the task keeps (max_files x max_file_size must fit), with the default's floor.
            EphemeralDisk: { SizeMB: Math.max(300, Math.ceil((KEEP_FILES * ROTATE_BYTES) / 2 ** 20) + 100) },
            Tasks: [
              {
                Name: TASK,
                Driver: "raw_exec",
                Config: { command: "/bin/sh", args: ["-c", script] },
                LogConfig: { MaxFiles: KEEP_FILES, MaxFileSizeMB: ROTATE_BYTES / 2 ** 20 },
                // 1024 MHz is cpu.shares 1024: the weight the floor's writer has in its default cgroup.
                Resources: { CPU: 1024, MemoryMB: 256 },
              },
            ],
          },
        ],
      },
    });
    const logmon = this.logmonPid();
    const cpuBefore = logmon === null ? 0 : cpuSeconds(logmon);
    const res = await fetch(`${this.agent.address}/v1/jobs`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
    if (!res.ok) throw new Error(`POST /v1/jobs: ${res.status} ${await res.text()}`);
    // The task names its shared alloc dir ($NOMAD_ALLOC_DIR, <alloc dir>/alloc) once it has written.
    const sharedDir = (await new Response(writerDone.stdout).text()).trim();
    if ((await writerDone.exited) !== 0 || !sharedDir) throw new Error(`${id}: waiting on ${wrote} failed`);
    const allocDir = dirname(sharedDir);
    const logDir = join(sharedDir, "logs");
    const tail = Buffer.alloc(DONE_MARKER.length + 1);
    const marker = `${DONE_MARKER}\n`;
    for (;;) {
      const live = logFileIndexes(logDir, TASK, "stdout").at(-1);
      if (live !== undefined) {
        const fd = openSync(join(logDir, `${TASK}.stdout.${live}`), "r");
        const size = fstatSync(fd).size;
        const got = size >= tail.length ? readSync(fd, tail, 0, tail.length, size - tail.length) : 0;
        closeSync(fd);
        if (got === tail.length && tail.toString() === marker) break;
      }
      await sleep(MARKER_POLL_MS);
    }
    const ended = performance.timeOrigin + performance.now();
    const cpu = logmon === null ? Number.NaN : cpuSeconds(logmon) - cpuBefore;
    const started = Number(BigInt(readFileSync(join(allocDir, TASK, "local", "started"), "utf8").trim()) / 1000n) / 1000;
    await fetch(`${this.agent.address}/v1/job/${id}?purge=true`, { method: "DELETE" });
    return { seconds: (ended - started) / 1000, cpuSeconds: cpu, load: loadAverage() };
  }

  async stop(): Promise<void> {
    this.stopAgent();
    await this.agent.cleanUp();
  }
}

const wanted = new Set(values.readers.split(","));
const logmons: Record<string, BenchLogmon> = {};
const atRest: Record<string, AtRest> = {};
for (const runtime of droverRuntimes()) {
  const key = runtime.name === "bun" ? "logmon" : `logmon-${runtime.name}`;
  if (!wanted.has(key)) continue;
  logmons[key] = await BenchLogmon.start(runtime);
  atRest[key] = await logmons[key].atRest();
}
const baselineBinary = values["baseline-binary"];
if (baselineBinary && wanted.has("logmon")) logmons["logmon-baseline"] = await BenchLogmon.start({ name: "baseline", argv: [baselineBinary] });
const FLOOR_YES = "yes, head -c > fifo; cat fifo > file (floor)";
const FLOOR_MANY = `${AGGREGATE_TASKS} x (yes, head -c > fifo; cat fifo > file) (floor)`;
const tasks: Record<string, BenchTask> = {};
if (wanted.has("task")) {
  tasks["drover task, compiled agent"] = await BenchTask.start(droverRuntime("bun").argv[0]!, "bun");
  if (baselineBinary) tasks[`drover task, baseline ${baselineBinary}`] = await BenchTask.start(baselineBinary, "baseline");
}
const LABELS: Record<string, string> = { bun: "Bun, compiled", deno: "Deno", baseline: `baseline ${baselineBinary}` };
const label = (logmon: BenchLogmon) => LABELS[logmon.runtime.name] ?? logmon.runtime.name;

const allPeers: [key: string, name: string, run: () => Promise<Sample>][] = [
  ["cat", "cat fifo > file (floor)", () => peerRun("cat", (fifo, out) => `exec cat '${fifo}' > '${out}/current'`)],
  ...Object.entries(logmons).map(([key, logmon]): [string, string, () => Promise<Sample>] => [
    key === "logmon-baseline" ? "logmon" : key,
    `drover logmon (${label(logmon)})`,
    () => logmon.run(),
  ]),
  ["svlogd", "svlogd (runit)", () => peerRun("svlogd", (fifo, out) => `exec svlogd '${out}' < '${fifo}'`)],
  ["s6-log", "s6-log (s6)", () => peerRun("s6-log", (fifo, out) => `exec s6-log n${KEEP_FILES} s${ROTATE_BYTES} '${out}' < '${fifo}'`)],
  ["aggregate", FLOOR_MANY, () => manyCats()],
  ...Object.entries(logmons).map(([, logmon]): [string, string, () => Promise<Sample>] => [
    "aggregate",
    `drover logmon, ${AGGREGATE_TASKS} tasks (${label(logmon)})`,
    () => logmon.runMany(),
  ]),
  ["cat-yes", FLOOR_YES, () => peerRun("cat-yes", (fifo, out) => `exec ${pinned(READER_CPU, "cat")} '${fifo}' > '${out}/current'`, true)],
  ...Object.entries(tasks).map(([name, task]): [string, string, () => Promise<Sample>] => ["task", name, () => task.run()]),
];
const available = (tool: string) => Bun.spawnSync(["sh", "-c", `command -v ${tool}`]).exitCode === 0;
const missing = ["svlogd", "s6-log"].filter((tool) => wanted.has(tool) && !available(tool));
const peers = Object.fromEntries(
  allPeers.filter(([key]) => wanted.has(key) && !missing.includes(key)).map(([, name, run]) => [name, run] as const),
);

const samples: Record<string, Sample[]> = Object.fromEntries(Object.keys(peers).map((name) => [name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(peers)) {
    // Each reader starts with no dirty pages left by the one before.
    Bun.spawnSync(["sync"]);
    const pagesBefore = pagesAllocated();
    const sample = await run();
    samples[name]!.push({ ...sample, pages: pagesAllocated() - pagesBefore });
  }
}

const fairness: [string, Fairness][] = [];
if (wanted.has("fairness")) for (const logmon of Object.values(logmons)) fairness.push([label(logmon), await logmon.fairness()]);

const mbps = (sample: Sample) => TOTAL / sample.seconds / 1e6;
const loads = (runs: Sample[]) => `${Math.min(...runs.map((run) => run.load)).toFixed(1)}-${Math.max(...runs.map((run) => run.load)).toFixed(1)}`;
const endToEnd = (name: string) => name === FLOOR_YES || Object.hasOwn(tasks, name);
const many = (name: string) => name === FLOOR_MANY || name.startsWith(`drover logmon, ${AGGREGATE_TASKS} tasks`);
const table = (title: string, floorName: string, rows: [string, Sample[]][]) => {
  const floor = median((samples[floorName] ?? []).map(mbps));
  const perGiB = (seconds: number) => seconds / (TOTAL / GiB);
  const withWriters = rows.some(([, runs]) => runs.some((run) => run.writerCpuSeconds !== undefined));
  printTable(
    title,
    ["reader", "MB/s", "best MB/s", "% of floor", "CPU s per GiB", ...(withWriters ? ["writers' CPU s per GiB"] : []), "pages allocated per GiB (k)", "load avg (1 min)"],
    rows.map(([name, runs]) => [
      name,
      median(runs.map(mbps)),
      Math.max(...runs.map(mbps)),
      (median(runs.map(mbps)) / floor) * 100,
      median(runs.map((run) => perGiB(run.cpuSeconds))),
      ...(withWriters ? [median(runs.map((run) => perGiB(run.writerCpuSeconds ?? Number.NaN)))] : []),
      median(runs.map((run) => (run.pages ?? Number.NaN) / (TOTAL / GiB) / 1000)),
      loads(runs),
    ]),
  );
};
const gib = (TOTAL / GiB).toFixed(2);
table(
  `Log throughput: ${gib} GiB of 100-byte lines through a FIFO, 10 MB rotation (median of ${ROUNDS})`,
  "cat fifo > file (floor)",
  Object.entries(samples).filter(([name]) => !endToEnd(name) && !many(name)),
);
if (wanted.has("aggregate")) {
  table(
    `Many tasks: ${AGGREGATE_TASKS} tasks at once write ${gib} GiB in all (yes | head -c), each through its FIFO (median of ${ROUNDS}, interleaved)`,
    FLOOR_MANY,
    Object.entries(samples).filter(([name]) => many(name)),
  );
}
if (Object.keys(tasks).length > 0 || wanted.has("cat-yes")) {
  table(
    `End to end: a raw_exec task writes ${gib} GiB of 100-byte lines (yes | head -c) to stdout -> FIFO -> logmon -> 10 MB files (median of ${ROUNDS}, interleaved)`,
    FLOOR_YES,
    Object.entries(samples).filter(([name]) => endToEnd(name)),
  );
  console.log("The task rows' CPU is the agent's logmon's; the floor's is cat's. A task's time runs from its first instruction to its last line in the live file.");
}
if (fairness.length > 0) {
  printTable(
    `Fairness: a quiet task's line (one every ${QUIET_GAP_MS} ms, ${QUIET_LINES} lines) to its file while ${FLOODERS} tasks write flat out (yes | head -c)`,
    ["logmon", "p50 ms", "p99 ms", "max ms", "load avg (1 min)"],
    fairness.map(([name, f]) => [name, f.p50, f.p99, f.max, f.load.toFixed(1)]),
  );
}
if (missing.length > 0) console.log(`not measured (apt-get install -y runit s6): ${missing.join(", ")}`);
console.log("anchor (quoted, not measured): Nomad 0.12 logmon ≈ 390 MB/s (1 GiB in 2.76 s)");

printTable(
  "drover logmon at rest",
  ["logmon", "tasks registered", "RSS MiB", "PSS MiB", "PSS anon MiB", "idle CPU ms/s", "RPC round trip ms (p50)"],
  Object.entries(atRest).flatMap(([key, rest]) => [
    [label(logmons[key]!), "0", rest.baseline.rssKiB / 1024, rest.baseline.pssKiB / 1024, rest.baseline.pssAnonKiB / 1024, "n/a", "n/a"],
    [label(logmons[key]!), String(IDLE_TASKS), rest.loaded.rssKiB / 1024, rest.loaded.pssKiB / 1024, rest.loaded.pssAnonKiB / 1024, rest.idleCpu * 1000, rest.rtt],
  ]),
);
console.log("PSS counts the binary's code in full when no other drover process shares it; PSS anon is what the logmon alone costs.");
console.log(machineLine());

for (const logmon of Object.values(logmons)) await logmon.supervisor.terminate();
for (const task of Object.values(tasks)) await task.stop();
removeFloorCgroups();
rmSync(root, { recursive: true, force: true });
