/**
 * Interactive exec sessions below the HTTP layer: a real executor starts the
 * command in a raw_exec or an isolated (exec) task, the agent's side takes
 * over its stdio, and the relay turns it into Nomad's frames. What a user
 * sees: output and exit code, stdin reaching the command, a real terminal
 * (its name, its size, resizes), and a command that dies with its client.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { detectCgroups } from "../../../src/cgroups/detect.ts";
import { AllocDir } from "../../../src/client/allocdir/alloc-dir.ts";
import { relayExecSession, type ExecRelay } from "../../../src/client/exec/relay.ts";
import { ExecDriver } from "../../../src/drivers/exec.ts";
import { RawExecDriver } from "../../../src/drivers/raw-exec.ts";
import type { DriverPlugin, TaskConfig } from "../../../src/drivers/driver.ts";
import { connectExecutor, startExecSession } from "../../../src/executor/client.ts";
import { DEFAULT_EXEC_CAPABILITIES } from "../../../src/lib/capabilities.ts";
import { detectIsolation } from "../../../src/nsenter/detect.ts";
import { DEFAULT_CHROOT_ENV } from "../../../src/nsenter/spec.ts";
import type { ExecInputFrame, ExecOutputFrame } from "../../../src/structs/exec-stream.ts";
import { capabilities, isRunning, killPids, pidsWithCmdline, tempDir, waitFor } from "../../helpers/index.ts";
import { canUseCgroups, testCgroupParent } from "../../executor/fixtures.ts";

const dir = tempDir("drover-exec-session-");
const runDir = join(dir, "run");
mkdirSync(runDir);
const parent = testCgroupParent();
afterAll(() => killPids(pidsWithCmdline(runDir)));

const support = await detectIsolation();
const isolationSkip = !support.available || !canUseCgroups;
if (isolationSkip) console.log(`skipping isolated exec session tests: ${support.available ? "no cgroups" : support.reason}`);

const cgroups = detectCgroups();
const rawDriver = new RawExecDriver({ enabled: true, runDir, cgroups, mhzPerCore: 2000 });
const execDriver = new ExecDriver({ support, runDir, cgroups, mhzPerCore: 2000, chrootEnv: DEFAULT_CHROOT_ENV, capabilities: DEFAULT_EXEC_CAPABILITIES });

const started: { driver: DriverPlugin; id: string }[] = [];
afterAll(async () => {
  for (const { driver, id } of started) await driver.destroyTask(id, true).catch(() => undefined);
});

/** A running `sleep 600` task of `driver`; the sessions of a test go into it. */
async function sleepingTask(driver: DriverPlugin, user?: string): Promise<{ id: string; executorPid: number; socket: string; allocId: string }> {
  const allocDir = new AllocDir(join(dir, "allocs"), randomUUID());
  allocDir.build();
  const isolated = driver === execDriver;
  const taskDir = allocDir.buildTask("main", { secretsTmpfs: isolated, owner: { uid: 65534, gid: 65534 } });
  const config: TaskConfig = {
    allocId: allocDir.allocId,
    taskName: "main",
    command: "sleep",
    args: ["600"],
    env: { PATH: "/usr/bin:/bin", GREETING: "hello" },
    cwd: taskDir.root,
    allocDir: allocDir.shared,
    stdoutPath: join(allocDir.logs, "main.out"),
    stderrPath: join(allocDir.logs, "main.err"),
    resources: { cpuMhz: 100, memoryMb: 64 },
    cgroupParent: parent,
    ...(user ? { user } : {}),
  };
  const { handle } = await driver.startTask(config);
  const id = `${config.allocId}/main`;
  started.push({ driver, id });
  return { id, executorPid: handle.executor.pid, socket: handle.executor.socket, allocId: config.allocId };
}

interface Recorded {
  relay: ExecRelay;
  pid: number;
  frames: ExecOutputFrame[];
  /** Everything decoded from the frames of `stream` so far. */
  text(stream: "stdout" | "stderr"): string;
  exitCode(): number | undefined;
}

async function session(driver: DriverPlugin, id: string, argv: string[], tty: boolean, input: ExecInputFrame[] = []): Promise<Recorded> {
  const started = await driver.execStreamTask(id, argv, tty);
  const frames: ExecOutputFrame[] = [];
  const relay = relayExecSession(started, (frame) => void frames.push(frame));
  for (const frame of input) relay.input(frame);
  const text = (stream: "stdout" | "stderr") =>
    frames
      .map((frame) => frame[stream]?.data)
      .filter((data): data is string => data !== undefined)
      .map((data) => Buffer.from(data, "base64").toString())
      .join("");
  return { relay, pid: started.pid, frames, text, exitCode: () => frames.find((frame) => frame.exited)?.result?.exit_code };
}

/** Live pids in process group `pgid`, read from /proc. */
function groupMembers(pgid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) === pgid && isRunning(pid);
      } catch {
        return false;
      }
    });
}

const stdin = (text: string): ExecInputFrame => ({ stdin: { data: Buffer.from(text).toString("base64") } });

for (const [name, driver, skip] of [
  ["raw_exec", rawDriver, false],
  ["exec", execDriver, isolationSkip],
] as const) {
  describe.skipIf(skip)(`an exec session in a ${name} task`, () => {
    test("streams stdout and stderr, closes each, then reports the exit code", async () => {
      const task = await sleepingTask(driver);
      const run = await session(driver, task.id, ["sh", "-c", 'echo "out $GREETING"; echo err >&2; exit 3'], false, [{ stdin: { close: true } }]);
      await run.relay.done;
      expect(run.text("stdout")).toBe("out hello\n");
      expect(run.text("stderr")).toBe("err\n");
      expect(run.exitCode()).toBe(3);
      // Both streams end before the exit frame, which comes last.
      const order = run.frames.map((frame) => (frame.exited ? "exited" : frame.stdout?.close ? "stdout closed" : frame.stderr?.close ? "stderr closed" : "data"));
      expect(order.at(-1)).toBe("exited");
      expect(order.filter((what) => what.endsWith("closed")).sort()).toEqual(["stderr closed", "stdout closed"]);
    });

    test("stdin reaches the command, and its close is the command's end of file", async () => {
      const task = await sleepingTask(driver);
      const run = await session(driver, task.id, ["sh", "-c", "read first; echo \"first=$first\"; wc -l"], false, [stdin("one\ntwo\nthree\n"), { stdin: { close: true } }]);
      await run.relay.done;
      expect(run.text("stdout")).toMatch(/^first=one\n\s*2\n$/);
      expect(run.exitCode()).toBe(0);
    });

    test("a terminal session: a named terminal that is the controlling one, its size, and resizes", async () => {
      const task = await sleepingTask(driver);
      const script = "tty; echo ctty=$(cut -d' ' -f7 /proc/$$/stat); stty size; read go; stty size; exit 4";
      const run = await session(driver, task.id, ["sh", "-c", script], true, [{ tty_size: { height: 30, width: 100 } }]);
      await waitFor("the first size", () => run.text("stdout").includes("30 100"));
      run.relay.input({ tty_size: { height: 50, width: 200 } });
      run.relay.input(stdin("\r"));
      await run.relay.done;
      const out = run.text("stdout");
      // A terminal turns "\n" into "\r\n"; an exec task's terminal comes from its own /dev/pts.
      expect(out).toMatch(name === "exec" ? /^\/dev\/pts\/0\r\n/ : /^\/dev\/pts\/\d+\r\n/);
      expect(Number(/ctty=(\d+)/.exec(out)?.[1])).toBeGreaterThan(0);
      expect(out).toContain("30 100\r\n");
      expect(out).toContain("50 200\r\n");
      expect(run.text("stderr")).toBe("");
      expect(run.exitCode()).toBe(4);
    });

    test.skipIf(!capabilities.root)("a task's user runs the session, on a terminal it owns", async () => {
      const task = await sleepingTask(driver, "nobody");
      const run = await session(driver, task.id, ["sh", "-c", 'echo "uid=$(id -u) owner=$(stat -c %u "$(tty)")"'], true);
      await run.relay.done;
      expect(run.text("stdout")).toBe("uid=65534 owner=65534\r\n");
      expect(run.exitCode()).toBe(0);
    });

    test("when the client hangs up, the command and what it started in its group die", async () => {
      const task = await sleepingTask(driver);
      const run = await session(driver, task.id, ["sh", "-c", "sleep 600 & echo started; wait"], false);
      await waitFor("the command to start", () => run.text("stdout").includes("started"));
      const pids = groupMembers(run.pid);
      expect(pids.length).toBe(2);
      run.relay.hangUp();
      await run.relay.done;
      await waitFor("the command and its background sleep gone", () => pids.every((pid) => !isRunning(pid)));
      expect(run.exitCode()).toBeUndefined();
    });

    test("when the agent's connection to the executor drops, its sessions die", async () => {
      const task = await sleepingTask(driver);
      const { connection } = await connectExecutor(task.socket, task.executorPid);
      const started = await startExecSession(connection, task.executorPid, ["sleep", "600"], false);
      expect(isRunning(started.pid)).toBe(true);
      const exited = started.exited.then(
        () => "answered",
        () => "no answer: the connection is gone",
      );
      connection.close();
      await waitFor("the session's command gone", () => !isRunning(started.pid));
      expect(await exited).toBe("no answer: the connection is gone");
    });
  });
}
