/** The logmon role as the agent sees it: the RPC methods, saved registrations, fairness between tasks. */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { openTaskOutput } from "../../src/executor/stdio.ts";
import { logFileIndexes } from "../../src/log-layout/layout.ts";
import { Scratch } from "../../src/logmon/log-stream.ts";
import { Logmon } from "../../src/logmon/logmon.ts";
import { Pump } from "../../src/logmon/pump.ts";
import { JOURNAL_MIN_LINES, Registrations, REGISTRATIONS_FILE } from "../../src/logmon/registrations.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";
import { killLeftovers, lineNumbers, readLog, startWriter, supervise, taskLogDir } from "./harness.ts";
import { DEFAULT_LOG_MAX_FILE_SIZE_MB, DEFAULT_LOG_MAX_FILES } from "../../src/lib/log-config.ts";

afterAll(killLeftovers);

const dir = tempDir("drover-logmon-");
const { supervisor, client } = supervise(join(dir, "logmon"));
afterAll(() => supervisor.terminate());

let allocs = 0;
function newTask(taskName = "web") {
  const allocDir = join(dir, `alloc-${allocs++}`);
  const { logDir, fifos } = taskLogDir(allocDir, taskName);
  return { id: `${allocDir}/${taskName}`, logDir, taskName, fifos, maxFiles: DEFAULT_LOG_MAX_FILES, maxFileSizeMB: DEFAULT_LOG_MAX_FILE_SIZE_MB };
}

/** Holds the task's spare ends and write end, with the executor's own code. */
function taskWriter(fifo: string) {
  const output = openTaskOutput(fifo);
  return {
    write: (text: string) => writeSync(output.taskFd, text),
    close: () => output.close(),
  };
}

describe("register", () => {
  test("creates the live files, counts the task once however often it is registered", async () => {
    const task = newTask();
    const before = (await client.version()).tasks;
    expect(await client.register(task)).toEqual({ created: true });
    expect(await client.register(task)).toEqual({ created: false });
    expect(await client.register({ ...task, maxFiles: 3 })).toEqual({ created: false });
    expect((await client.version()).tasks).toBe(before + 1);
    expect(existsSync(join(task.logDir, "web.stdout.0"))).toBe(true);
    expect(existsSync(join(task.logDir, "web.stderr.0"))).toBe(true);
  });

  test("refuses the same id for other FIFOs, and other ids for the same FIFOs", async () => {
    const task = newTask();
    await client.register(task);
    const other = newTask();
    await expect(client.register({ ...other, id: task.id })).rejects.toThrow(/deregister it first/);
    await expect(client.register({ ...task, id: `${task.id}-again` })).rejects.toThrow(/already registered/);
  });

  test("names the bad field of a malformed registration", async () => {
    const task = newTask();
    await expect(client.register({ ...task, maxFiles: 0 })).rejects.toThrow(/maxFiles/);
    await expect(client.register({ ...task, logDir: "relative/logs" })).rejects.toThrow(/logDir|absolute/);
  });

  test("refuses a FIFO replaced by a symlink and writes nothing through it", async () => {
    const task = newTask();
    const target = join(dir, `target-${allocs}`);
    writeFileSync(target, "untouched\n");
    unlinkSync(task.fifos.stdout);
    symlinkSync(target, task.fifos.stdout);
    await expect(client.register(task)).rejects.toThrow(/symbolic link/);
    expect(readFileSync(target, "utf8")).toBe("untouched\n");
  });
});

describe("registerBatch", () => {
  test("registers each task as register would; a malformed or refused task gets its own error and the rest are registered", async () => {
    const good = newTask();
    const alsoGood = newTask();
    const symlinked = newTask();
    unlinkSync(symlinked.fifos.stdout);
    symlinkSync(join(dir, "nowhere"), symlinked.fifos.stdout);
    const before = (await client.version()).tasks;
    const strip = ({ fifos: _fifos, ...task }: ReturnType<typeof newTask>) => task;
    const { results } = await supervisor.call("registerBatch", {
      tasks: [strip(good), { ...strip(newTask()), maxFiles: 0 }, strip(symlinked), strip(alsoGood), strip(good)],
    });
    expect(results[0]).toEqual({ created: true });
    expect(results[1]).toEqual({ error: expect.stringMatching(/tasks\[1\].*maxFiles/) });
    expect(results[2]).toEqual({ error: expect.stringMatching(/symbolic link/) });
    expect(results[3]).toEqual({ created: true });
    expect(results[4]).toEqual({ created: false });
    expect((await client.version()).tasks).toBe(before + 2);
    for (const task of [good, alsoGood]) expect(logFileIndexes(task.logDir, "web", "stdout")).toEqual([0]);
  });

  test("tasks registered through the client while one registration is under way all land, and are pumped", async () => {
    const tasks = Array.from({ length: 24 }, () => newTask());
    const results = await Promise.all(tasks.map(({ fifos: _fifos, ...task }) => client.register(task)));
    expect(results).toEqual(tasks.map(() => ({ created: true })));
    const writers = tasks.map((task) => taskWriter(task.fifos.stdout));
    writers.forEach((writer, i) => writer.write(`line of task ${i}\n`));
    await Promise.all(tasks.map((task) => client.flush(task.id)));
    tasks.forEach((task, i) => expect(readFileSync(join(task.logDir, "web.stdout.0"), "utf8")).toBe(`line of task ${i}\n`));
    for (const writer of writers) writer.close();
  });
});

describe("flush and deregister", () => {
  test("flush answers once everything the task wrote is in its files", async () => {
    const task = newTask();
    await client.register(task);
    const out = taskWriter(task.fifos.stdout);
    const err = taskWriter(task.fifos.stderr);
    out.write("to stdout\n");
    err.write("to stderr\n");
    await client.flush(task.id);
    expect(readLog(task.logDir, "web", "stdout")).toBe("to stdout\n");
    expect(readLog(task.logDir, "web", "stderr")).toBe("to stderr\n");
    out.close();
    err.close();
  });

  test("deregister flushes first, then stops; unknown ids are no error for deregister but are for flush", async () => {
    const task = newTask();
    await client.register(task);
    const out = taskWriter(task.fifos.stdout);
    out.write("last words\n");
    expect(await client.deregister(task.id)).toBe(true);
    expect(readLog(task.logDir, "web", "stdout")).toBe("last words\n");
    out.write("after deregister\n");
    expect(await client.deregister(task.id)).toBe(false);
    await expect(client.flush(task.id)).rejects.toThrow(/no task registered/);
    expect(readLog(task.logDir, "web", "stdout")).toBe("last words\n");
    out.close();
  });
});

test("a restarted logmon resumes its saved tasks before anyone registers them again", async () => {
  const stateDir = join(dir, "resume-state");
  const first = supervise(stateDir).supervisor;
  const second = supervise(stateDir).supervisor;
  const task = newTask();
  const out = taskWriter(task.fifos.stdout);
  try {
    await first.call("register", { id: task.id, logDir: task.logDir, taskName: task.taskName, maxFiles: 10, maxFileSizeMB: 10 });
    out.write("before the crash\n");
    await first.call("flush", { id: task.id });
    const pid = first.logmonPid!;
    first.stop();
    process.kill(pid, "SIGKILL");
    out.write("while no logmon ran\n");

    // A new agent with no task runners yet: the saved registration alone brings the logmon back.
    await second.start();
    expect(second.logmonPid).not.toBe(pid);
    out.write("after the restart\n");
    await second.call("flush", { id: task.id });
    expect(readLog(task.logDir, "web", "stdout")).toBe("before the crash\nwhile no logmon ran\nafter the restart\n");
  } finally {
    out.close();
    await second.terminate();
    await first.terminate();
  }
}, 30_000);

/** The nice value of a process's main thread (the logmon's pump) and its session's autogroup, as /proc shows them. */
function schedulingOf(pid: number): { nice: number; autogroup: string | null } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const nice = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
  const autogroup = existsSync(`/proc/${pid}/autogroup`) ? readFileSync(`/proc/${pid}/autogroup`, "utf8").trim() : null;
  return { nice, autogroup };
}

// Lowering a nice value needs CAP_SYS_NICE.
describe.skipIf(process.getuid?.() !== 0).each(droverRuntimes())("the pump's CPU weight", (runtime) => {
  test(`weighs as much as the tasks it serves, and comes back as they leave (${runtime.name})`, async () => {
    const own = supervise(join(dir, `weight-state-${runtime.name}`), { drover: runtime.argv });
    const tasks = Array.from({ length: 20 }, () => newTask());
    try {
      for (const task of tasks) await own.client.register(task);
      const pid = (await own.client.version()).pid;
      // 20 processes' weight: Linux weighs nice n as 1.25^-n, and 1.25^13 is about 18.
      const busy = schedulingOf(pid);
      expect(busy.nice).toBe(-13);
      if (busy.autogroup !== null) expect(busy.autogroup).toMatch(/ nice -13$/);

      await own.client.deregister(tasks[0]!.id);
      expect(schedulingOf(pid).nice).toBe(-13);
      for (const task of tasks.slice(1)) await own.client.deregister(task.id);
      const idle = schedulingOf(pid);
      expect(idle.nice).toBe(0);
      if (idle.autogroup !== null) expect(idle.autogroup).toMatch(/ nice 0$/);
    } finally {
      await own.supervisor.terminate();
    }
  }, 30_000);
});

test("a task flooding its stdout does not hold back another task's lines", async () => {
  const flooder = newTask("flood");
  const quiet = newTask("quiet");
  await client.register({ ...flooder, maxFiles: 2, maxFileSizeMB: 1 });
  await client.register(quiet);
  const flood = startWriter(flooder.fifos.stdout, 0, { forever: true, batch: 10_000 });
  try {
    await waitFor("the flood to rotate", () => (logFileIndexes(flooder.logDir, "flood", "stdout").at(-1) ?? 0) >= 2);
    const floodIndexAtStart = logFileIndexes(flooder.logDir, "flood", "stdout").at(-1)!;
    const trickle = startWriter(quiet.fifos.stdout, 200, { batch: 10, pauseMs: 5 });
    await waitFor("every quiet line in its file", () => lineNumbers(readLog(quiet.logDir, "quiet", "stdout")).length === 200, { timeoutMs: 20_000 });
    // The flood kept flowing the whole time: the logmon served both.
    expect(logFileIndexes(flooder.logDir, "flood", "stdout").at(-1)!).toBeGreaterThan(floodIndexAtStart);
    expect(lineNumbers(readLog(quiet.logDir, "quiet", "stdout"))).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(await trickle.exited).toEqual({ exitCode: 0, signal: 0 });
  } finally {
    flood.kill("SIGKILL");
    await flood.exited;
  }
}, 30_000);

test("while many tasks each write small pieces, the pump's batching strands no line: a quiet task's lines and theirs all land", async () => {
  // Each chatty task's pipe holds little per round, so the pump sleeps between rounds to let them gather a batch.
  const chatty = Array.from({ length: 5 }, (_, i) => newTask(`chatty${i}`));
  const quiet = newTask("quiet");
  for (const task of [...chatty, quiet]) await client.register(task);
  const CHATTY_LINES = 20_000;
  const QUIET_LINES = 100;
  const writers = chatty.map((task) => startWriter(task.fifos.stdout, CHATTY_LINES, { batch: 80 }));
  const trickle = startWriter(quiet.fifos.stdout, QUIET_LINES, { batch: 1, pauseMs: 5 });
  const every = (count: number) => Array.from({ length: count }, (_, i) => i);
  await waitFor("every quiet line in its file", () => lineNumbers(readLog(quiet.logDir, "quiet", "stdout")).length === QUIET_LINES, { timeoutMs: 20_000 });
  expect(lineNumbers(readLog(quiet.logDir, "quiet", "stdout"))).toEqual(every(QUIET_LINES));
  for (const writer of [...writers, trickle]) expect(await writer.exited).toEqual({ exitCode: 0, signal: 0 });
  for (const task of chatty) {
    await waitFor(`every line of ${task.taskName}`, () => lineNumbers(readLog(task.logDir, task.taskName, "stdout")).length === CHATTY_LINES, { timeoutMs: 20_000 });
    expect(lineNumbers(readLog(task.logDir, task.taskName, "stdout"))).toEqual(every(CHATTY_LINES));
  }
}, 30_000);

test("a task whose alloc dir was destroyed without a deregister is dropped by the sweep", async () => {
  const stateDir = join(dir, "sweep-state");
  mkdirSync(stateDir, { recursive: true });
  const registrations = new Registrations(join(stateDir, REGISTRATIONS_FILE));
  const pump = new Pump();
  // Only the bookkeeping is under test here: nothing needs pumping.
  pump.stop();
  const logmon = new Logmon(registrations, pump, new Scratch());
  const kept = newTask();
  const destroyed = newTask();
  await Promise.all([
    logmon.register({ id: kept.id, logDir: kept.logDir, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 }),
    logmon.register({ id: destroyed.id, logDir: destroyed.logDir, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 }),
  ]);
  expect(registrations.load().tasks.length).toBe(2);
  rmSync(join(destroyed.logDir, "..", ".."), { recursive: true });
  await logmon.sweep();
  expect(logmon.taskCount).toBe(1);
  expect(registrations.load().tasks.map((task) => task.id)).toEqual([kept.id]);
  logmon.shutdown();
});

test("tasks registering together share one write of the registrations, and each is answered once it is written", async () => {
  const stateDir = join(dir, "batch-state");
  mkdirSync(stateDir, { recursive: true });
  let writes = 0;
  const registrations = new (class extends Registrations {
    override save(tasks: Parameters<Registrations["save"]>[0]): void {
      writes++;
      super.save(tasks);
    }
    override append(changes: Parameters<Registrations["append"]>[0]): void {
      writes++;
      super.append(changes);
    }
  })(join(stateDir, REGISTRATIONS_FILE));
  const pump = new Pump();
  pump.stop();
  const logmon = new Logmon(registrations, pump, new Scratch());
  const tasks = Array.from({ length: 40 }, () => newTask());
  await Promise.all(
    tasks.map(async (task) => {
      await logmon.register({ id: task.id, logDir: task.logDir, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 });
      expect(registrations.load().tasks.map((saved) => saved.id)).toContain(task.id);
    }),
  );
  expect(writes).toBe(1);
  logmon.shutdown();
});

test("a failed write of the registrations names the file, and the caller's retry is answered once its task is written", async () => {
  const stateDir = join(dir, "full-disk-state");
  mkdirSync(stateDir, { recursive: true });
  let full = true;
  const registrations = new (class extends Registrations {
    override save(tasks: Parameters<Registrations["save"]>[0]): void {
      if (full) throw new Error("ENOSPC: No space left on device, write");
      super.save(tasks);
    }
    override append(changes: Parameters<Registrations["append"]>[0]): void {
      if (full) throw new Error("ENOSPC: No space left on device, write");
      super.append(changes);
    }
  })(join(stateDir, REGISTRATIONS_FILE));
  const pump = new Pump();
  pump.stop();
  const logmon = new Logmon(registrations, pump, new Scratch());
  const task = newTask();
  const request = { id: task.id, logDir: task.logDir, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 };
  await expect(logmon.register(request)).rejects.toThrow(`save the registrations to ${registrations.path}: ENOSPC`);
  full = false;
  expect(await logmon.register(request)).toEqual({ created: false });
  expect(registrations.load().tasks.map((saved) => saved.id)).toEqual([task.id]);

  full = true;
  await expect(logmon.deregister(task.id)).rejects.toThrow(registrations.path);
  full = false;
  expect(await logmon.deregister(task.id)).toEqual({ removed: false });
  expect(registrations.load().tasks).toEqual([]);
  logmon.shutdown();
});

test("a logmon that cannot write its registrations at resume still pumps the tasks it resumed", async () => {
  const stateDir = join(dir, "full-disk-resume-state");
  mkdirSync(stateDir, { recursive: true });
  const kept = newTask();
  const gone = newTask();
  const saved = [kept, gone].map((task) => ({ id: task.id, logDir: task.logDir, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 }));
  new Registrations(join(stateDir, REGISTRATIONS_FILE)).save(saved);
  rmSync(join(gone.logDir, "..", ".."), { recursive: true });
  let full = true;
  const registrations = new (class extends Registrations {
    override save(tasks: Parameters<Registrations["save"]>[0]): void {
      if (full) throw new Error("ENOSPC: No space left on device, write");
      super.save(tasks);
    }
    override append(changes: Parameters<Registrations["append"]>[0]): void {
      if (full) throw new Error("ENOSPC: No space left on device, write");
      super.append(changes);
    }
  })(join(stateDir, REGISTRATIONS_FILE));
  const pump = new Pump();
  pump.stop();
  const logmon = new Logmon(registrations, pump, new Scratch());
  logmon.resume();
  expect(logmon.taskCount).toBe(1);
  await Promise.resolve();
  // The old file stands until a write succeeds; the next call writes it.
  expect(registrations.load().tasks.map((task) => task.id)).toEqual([kept.id, gone.id]);
  full = false;
  expect(await logmon.register(saved[0]!)).toEqual({ created: false });
  expect(registrations.load().tasks.map((task) => task.id)).toEqual([kept.id]);
  logmon.shutdown();
});

test("registrations one at a time are appended to the journal, folded into a snapshot once it outgrows the tasks; a resumed logmon gets every task", async () => {
  const stateDir = join(dir, "journal-state");
  mkdirSync(stateDir, { recursive: true });
  const path = join(stateDir, REGISTRATIONS_FILE);
  const registrations = new Registrations(path);
  const pump = new Pump();
  pump.stop();
  const logmon = new Logmon(registrations, pump, new Scratch());
  const tasks = Array.from({ length: JOURNAL_MIN_LINES + 10 }, () => newTask());
  const request = (task: (typeof tasks)[number], maxFiles = 2) => ({ id: task.id, logDir: task.logDir, taskName: "web", maxFiles, maxFileSizeMB: 1 });
  for (const task of tasks.slice(0, JOURNAL_MIN_LINES)) await logmon.register(request(task));
  // Each batch one line (after the journal's first, naming the snapshot it follows): no snapshot of every task.
  expect(existsSync(path)).toBe(false);
  expect(readFileSync(registrations.journalPath, "utf8").trim().split("\n")).toHaveLength(JOURNAL_MIN_LINES + 1);
  // One line more than there are tasks: a snapshot instead, and an empty journal.
  await logmon.deregister(tasks[1]!.id);
  expect(new Registrations(path).load().tasks).toHaveLength(JOURNAL_MIN_LINES - 1);
  expect(readFileSync(registrations.journalPath, "utf8")).toBe("");
  for (const task of tasks.slice(JOURNAL_MIN_LINES)) await logmon.register(request(task));
  await logmon.register(request(tasks[0]!, 3));
  expect(readFileSync(registrations.journalPath, "utf8").trim().split("\n")).toHaveLength(1 + 11);
  logmon.shutdown();
  // An append a crash cut short (no newline): its caller was never answered, and it is passed over.
  writeFileSync(registrations.journalPath, `{"remove":"${tasks[2]!.id}`, { flag: "a" });

  const loaded = new Registrations(path).load();
  expect(loaded.problem).toBeUndefined();
  expect(loaded.repaired).toBe(`${registrations.journalPath}: its last line, cut short, passed over`);
  expect(loaded.tasks.map((task) => task.id).sort()).toEqual(tasks.filter((_, i) => i !== 1).map((task) => task.id).sort());
  expect(loaded.tasks.find((task) => task.id === tasks[0]!.id)?.maxFiles).toBe(3);
  const resumed = new Logmon(new Registrations(path), pump, new Scratch());
  resumed.resume();
  expect(resumed.taskCount).toBe(tasks.length - 1);
  // The next change is not written after the piece cut short (which would spoil both lines): a snapshot replaces them.
  await resumed.deregister(tasks[3]!.id);
  const after = new Registrations(path).load();
  expect(after).toEqual({ tasks: expect.any(Array) });
  expect(after.tasks.map((task) => task.id).sort()).toEqual(tasks.filter((_, i) => i !== 1 && i !== 3).map((task) => task.id).sort());
  resumed.shutdown();
});

test("a crash between a snapshot and the journal's truncation leaves the journal older than the snapshot: passed over, a removed task stays removed", async () => {
  const stateDir = join(dir, "stale-journal-state");
  mkdirSync(stateDir, { recursive: true });
  const path = join(stateDir, REGISTRATIONS_FILE);
  let journalBeforeSnapshot = "";
  const registrations = new (class extends Registrations {
    override save(tasks: Parameters<Registrations["save"]>[0]): void {
      journalBeforeSnapshot = existsSync(this.journalPath) ? readFileSync(this.journalPath, "utf8") : "";
      super.save(tasks);
    }
  })(path);
  const pump = new Pump();
  pump.stop();
  const logmon = new Logmon(registrations, pump, new Scratch());
  const tasks = Array.from({ length: JOURNAL_MIN_LINES }, () => newTask());
  for (const task of tasks) await logmon.register({ id: task.id, logDir: task.logDir, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 });
  // The journal's line JOURNAL_MIN_LINES + 1 is a snapshot instead: the one without tasks[0].
  await logmon.deregister(tasks[0]!.id);
  logmon.shutdown();
  expect(readFileSync(registrations.journalPath, "utf8")).toBe("");
  // As if the logmon was killed after the snapshot's rename, before the truncation.
  writeFileSync(registrations.journalPath, journalBeforeSnapshot);
  expect(journalBeforeSnapshot).toContain(`{"add":{"id":"${tasks[0]!.id}"`);

  const loaded = new Registrations(path).load();
  expect(loaded.problem).toBeUndefined();
  expect(loaded.repaired).toBe(`${registrations.journalPath} follows snapshot 0, not 1: passed over`);
  expect(loaded.tasks.map((task) => task.id).sort()).toEqual(tasks.slice(1).map((task) => task.id).sort());
  const resumed = new Logmon(new Registrations(path), pump, new Scratch());
  resumed.resume();
  expect(resumed.taskCount).toBe(tasks.length - 1);
  // Resuming wrote a snapshot in its place; a change after it is a journal line that loads.
  const extra = newTask();
  await resumed.register({ id: extra.id, logDir: extra.logDir, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 });
  resumed.shutdown();
  expect(new Registrations(path).load()).toEqual({ tasks: expect.any(Array) });
  expect(new Registrations(path).load().tasks.map((task) => task.id).sort()).toEqual([...tasks.slice(1), extra].map((task) => task.id).sort());
});

test.skipIf(process.getuid?.() !== 0)("an append the disk fills part way fails its caller, loses nothing saved before, and the next write is a snapshot", () => {
  const stateDir = join(dir, "full-journal-state");
  mkdirSync(stateDir, { recursive: true });
  expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", stateDir]).status).toBe(0);
  try {
    const path = join(stateDir, REGISTRATIONS_FILE);
    const registrations = new Registrations(path);
    const task = (i: number) => ({ id: `/allocs/alloc-${i}/web`, logDir: `/allocs/alloc-${i}/alloc/logs`, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 });
    const saved = [task(0), task(1)];
    registrations.save(saved);
    registrations.append(new Map([[task(2).id, task(2)]]));
    // What is left of the disk takes the start of the next append, not all of it (tmpfs counts 4 KiB pages).
    writeFileSync(join(stateDir, "filler"), new Uint8Array(48 * 1024));
    const many = new Map(Array.from({ length: 300 }, (_, i) => [task(100 + i).id, task(100 + i)]));
    expect(() => registrations.append(many)).toThrow(/ENOSPC|No space/);
    expect(registrations.wantsSnapshot(1, 3)).toBe(true);

    const loaded = new Registrations(path).load();
    expect(loaded.problem).toBeUndefined();
    expect(loaded.repaired).toBe(`${registrations.journalPath}: its last line, cut short, passed over`);
    // Whole lines of the failed append may stand (their callers were told it failed; a retry sets the same).
    expect(loaded.tasks.slice(0, 3)).toEqual([...saved, task(2)]);
    expect(loaded.tasks.length).toBeLessThan(3 + many.size);

    rmSync(join(stateDir, "filler"));
    registrations.save([...saved, task(2), ...many.values()]);
    expect(new Registrations(path).load()).toEqual({ tasks: [...saved, task(2), ...many.values()] });
  } finally {
    spawnSync("umount", [stateDir]);
  }
});

test("after a snapshot whose journal could not be emptied, the next write is a snapshot, not a line the old journal's generation would hide", () => {
  const stateDir = join(dir, "untruncated-journal-state");
  mkdirSync(stateDir, { recursive: true });
  const registrations = new Registrations(join(stateDir, REGISTRATIONS_FILE));
  const task = { id: "/allocs/a/web", logDir: "/allocs/a/alloc/logs", taskName: "web", maxFiles: 2, maxFileSizeMB: 1 };
  // A journal that cannot be truncated (here a directory: EISDIR).
  mkdirSync(registrations.journalPath);
  expect(() => registrations.save([task])).toThrow(/EISDIR/);
  expect(registrations.wantsSnapshot(1, 1)).toBe(true);
  expect(() => registrations.append(new Map([[task.id, null]]))).toThrow(`${registrations.journalPath} may not be appended to before a snapshot is written`);
  rmSync(registrations.journalPath, { recursive: true });
  registrations.save([]);
  expect(registrations.wantsSnapshot(1, 1)).toBe(false);
  expect(new Registrations(registrations.path).load()).toEqual({ tasks: [] });
});

test("a journal line that is not a registration sets the journal aside, naming the line; the snapshot's tasks load", () => {
  const stateDir = join(dir, "bad-journal-state");
  mkdirSync(stateDir, { recursive: true });
  const registrations = new Registrations(join(stateDir, REGISTRATIONS_FILE));
  const task = newTask();
  registrations.save([{ id: task.id, logDir: task.logDir, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 }]);
  writeFileSync(registrations.journalPath, `{"add":{"id":"x"}}\n`);
  const loaded = registrations.load();
  expect(loaded.tasks.map((saved) => saved.id)).toEqual([task.id]);
  expect(loaded.problem).toContain(`${registrations.journalPath} unreadable (line 1: `);
  expect(existsSync(registrations.journalPath)).toBe(false);
});
