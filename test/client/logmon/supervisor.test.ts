/** The agent's side of the logmon: started on demand, found again by a new agent, restarted when it dies or hangs. */
import { afterAll, expect, test } from "bun:test";
import { closeSync, existsSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openFifo } from "../../../src/log-layout/fifo.ts";
import { LogmonSupervisor } from "../../../src/client/logmon/supervisor.ts";
import { JOURNAL_SUFFIX, REGISTRATIONS_FILE } from "../../../src/logmon/registrations.ts";
import { isRunning, tempDir, waitFor } from "../../helpers/index.ts";
import { killLeftovers, readLog, supervise, taskLogDir } from "../../logmon/harness.ts";
import { DEFAULT_LOG_MAX_FILE_SIZE_MB, DEFAULT_LOG_MAX_FILES } from "../../../src/lib/log-config.ts";

afterAll(killLeftovers);

const dir = tempDir("drover-lmsup-");
const stateDir = join(dir, "logmon");
const agent = supervise(stateDir);
afterAll(() => agent.supervisor.terminate());

test("nothing starts until the first call when no task needs a logmon", async () => {
  await agent.supervisor.start();
  expect(agent.supervisor.logmonPid).toBeUndefined();
  expect(agent.events).toEqual([]);
  const version = await agent.client.version();
  expect(isRunning(version.pid)).toBe(true);
  expect(agent.events.map((event) => event.kind)).toEqual(["spawned", "connected"]);
});

test("a new agent attaches to the running logmon instead of starting another", async () => {
  const pid = agent.supervisor.logmonPid!;
  const next = supervise(stateDir);
  await next.supervisor.start();
  expect(next.supervisor.logmonPid).toBe(pid);
  expect(next.events.map((event) => event.kind)).toEqual(["connected"]);
  next.supervisor.stop();
  expect(isRunning(pid)).toBe(true);
});

test("a killed logmon is restarted at once, and tasks are registered again even if its saved state is gone", async () => {
  const { logDir, fifos } = taskLogDir(join(dir, "a1"), "web");
  await agent.client.register({ id: "a1/web", logDir, taskName: "web", maxFiles: DEFAULT_LOG_MAX_FILES, maxFileSizeMB: DEFAULT_LOG_MAX_FILE_SIZE_MB });
  const spare = openFifo(fifos.stdout, "spare");
  const out = openFifo(fifos.stdout, "writer");
  try {
    const pid = agent.supervisor.logmonPid!;
    const connections = agent.events.filter((event) => event.kind === "connected").length;
    for (const file of [REGISTRATIONS_FILE, `${REGISTRATIONS_FILE}${JOURNAL_SUFFIX}`]) rmSync(join(stateDir, file), { force: true });
    process.kill(pid, "SIGKILL");
    writeSync(out, "written while it was down\n");
    await waitFor("a new logmon", () => agent.events.filter((event) => event.kind === "connected").length > connections);
    expect(agent.supervisor.logmonPid).not.toBe(pid);
    expect((await agent.client.version()).tasks).toBe(1);
    await agent.client.flush("a1/web");
    expect(readLog(logDir, "web", "stdout")).toBe("written while it was down\n");
  } finally {
    closeSync(out);
    closeSync(spare);
  }
}, 30_000);

test("a logmon that stops answering is killed and replaced", async () => {
  const watcher = supervise(stateDir, { probe: { intervalMs: 200, timeoutMs: 300 } });
  const supervisor = watcher.supervisor;
  await supervisor.start();
  const pid = supervisor.logmonPid!;
  try {
    process.kill(pid, "SIGSTOP");
    await waitFor("the hung logmon to be replaced", () => supervisor.logmonPid !== undefined && supervisor.logmonPid !== pid, { timeoutMs: 20_000 });
    expect(watcher.events.map((event) => event.kind)).toContain("unresponsive");
    await waitFor("the hung logmon to be gone", () => !isRunning(pid));
  } finally {
    supervisor.stop();
  }
}, 30_000);

test("terminate stops the logmon and removes its socket", async () => {
  const pid = (await agent.client.version()).pid;
  await agent.supervisor.terminate();
  expect(isRunning(pid)).toBe(false);
  expect(existsSync(agent.supervisor.socketPath)).toBe(false);
});

test("of two logmons started at once, the loser leaves instead of taking over when the winner stops", async () => {
  const raceDir = join(dir, "race");
  const [first, second] = [supervise(raceDir), supervise(raceDir)];
  const [a, b] = await Promise.all([first.client.version(), second.client.version()]);
  expect(a.pid).toBe(b.pid);
  const spawned = [...first.events, ...second.events].flatMap((event) => (event.kind === "spawned" ? [event.pid] : []));
  expect(spawned).toHaveLength(2);
  const loser = spawned.find((pid) => pid !== a.pid)!;
  second.supervisor.stop();
  await first.supervisor.terminate();
  await waitFor("the losing logmon to leave", () => !isRunning(loser));
  expect(existsSync(first.supervisor.socketPath)).toBe(false);
}, 30_000);

test("a socket path too long for a unix socket is refused up front", () => {
  expect(() => new LogmonSupervisor({ stateDir: join(dir, "x".repeat(120)) })).toThrow(/longer than 107 bytes/);
});
