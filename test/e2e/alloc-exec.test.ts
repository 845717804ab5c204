/**
 * Interactive `alloc exec` through the compiled binary, from both clients
 * that speak Nomad's exec websocket: Nomad 0.12.12's own CLI and drover's.
 * For a raw_exec and an exec (isolated) task each: output and exit code,
 * stdin piped in, a terminal session driven at a real pseudo-terminal (its
 * name, its size, a resize), and a client that vanishes taking the command
 * with it.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectIsolation } from "../../src/nsenter/detect.ts";
import type { Allocation } from "../../src/structs/alloc.ts";
import { testAgent } from "../helpers/agent.ts";
import { capabilities, isRunning, pidsWithEnv, waitFor } from "../helpers/index.ts";
import { NOMAD_BINARY } from "../helpers/nomad.ts";
import { onTerminal, terminalUnavailable } from "../helpers/pty.ts";

const support = await detectIsolation();
const isolationSkip = !support.available || capabilities.cgroups.mode === "none" ? (support.available ? "no cgroups" : support.reason) : null;
if (isolationSkip) console.log(`skipping alloc exec into exec tasks: ${isolationSkip}`);
if (terminalUnavailable) console.log(`skipping terminal sessions: ${terminalUnavailable}`);

const JOB = (driver: string) => `
job "${driver}-box" {
  datacenters = ["dc1"]
  group "g" {
    task "main" {
      driver = "${driver}"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      env {
        GREETING = "hello"
      }
    }
  }
}
`;

const agent = await testAgent("drover-e2e-alloc-exec-");
await agent.start();
const allocOf: Record<string, string> = {};

async function runningAlloc(driver: string): Promise<string> {
  if (allocOf[driver]) return allocOf[driver];
  const path = join(agent.dir, `${driver}.hcl`);
  writeFileSync(path, JOB(driver));
  expect((await agent.cli("job", "run", "-detach", path)).code).toBe(0);
  const alloc = await waitFor(`the ${driver} alloc running`, async () =>
    (await agent.get<Allocation[]>(`/v1/job/${driver}-box/allocations`)).find((a) => a.ClientStatus === "running"),
  );
  allocOf[driver] = alloc.ID;
  return alloc.ID;
}

const env = { ...process.env, NOMAD_ADDR: agent.address, DROVER_ADDR: agent.address };

async function run(argv: string[], stdin: "ignore" | Blob = "ignore"): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn(argv, { env, stdin, stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code, stdout, stderr };
}

const clients = [
  { name: "nomad", argv: NOMAD_BINARY ? [NOMAD_BINARY] : [], skip: !NOMAD_BINARY },
  { name: "drover", argv: [...agent.runtime.argv], skip: false },
];

for (const client of clients) {
  for (const driver of ["raw_exec", "exec"]) {
    const skip = client.skip || (driver === "exec" && isolationSkip !== null);
    const exec = (...args: string[]) => [...client.argv, "alloc", "exec", ...args];

    describe.skipIf(skip)(`${client.name} alloc exec into a ${driver} task`, () => {
      test("prints the command's stdout and stderr and exits with its code", async () => {
        const alloc = await runningAlloc(driver);
        const result = await run(exec("-i=false", alloc, "sh", "-c", 'echo "out $GREETING"; echo err >&2; exit 3'));
        expect(result).toEqual({ code: 3, stdout: "out hello\n", stderr: "err\n" });
      });

      test("passes piped stdin through to its end", async () => {
        const alloc = await runningAlloc(driver);
        const result = await run(exec(alloc, "sh", "-c", 'read first; echo "first=$first"; wc -l'), new Blob(["one\ntwo\nthree\n"]));
        expect(result.stdout).toMatch(/^first=one\n\s*2\n$/);
        expect(result.code).toBe(0);
      });

      test.skipIf(terminalUnavailable !== null)("a terminal session: the tty's name, its size, a resize, the exit code", async () => {
        const alloc = await runningAlloc(driver);
        const terminal = onTerminal(exec(alloc, "/bin/sh"), { rows: 30, cols: 100 }, env);
        terminal.type("tty; stty size\n");
        // An exec task's terminal comes from its own /dev/pts, where it is the first.
        await terminal.waitFor("the tty and its size", driver === "exec" ? /\/dev\/pts\/0\r?\n30 100\r?\n/ : /\/dev\/pts\/\d+\r?\n30 100\r?\n/);
        terminal.resize(50, 200);
        // The new size travels beside the typing, so ask until the shell sees it.
        await waitFor("the new size inside", async () => {
          terminal.type("stty size\n");
          await new Promise((resolve) => setTimeout(resolve, 100));
          return /50 200\r?\n/.test(terminal.output());
        });
        terminal.type("exit 5\n");
        expect(await terminal.exited).toBe(5);
      });

      test.skipIf(terminalUnavailable !== null)('"~." at the start of a line closes the session and ends the shell', async () => {
        const alloc = await runningAlloc(driver);
        const mark = `escape-${client.name}-${driver}-${process.pid}`;
        const terminal = onTerminal(exec(alloc, "env", `DROVER_TEST_MARK=${mark}`, "/bin/sh"), { rows: 24, cols: 80 }, env);
        const shells = await waitFor("the shell running", () => {
          const found = pidsWithEnv("DROVER_TEST_MARK", mark);
          return found.length > 0 ? found : null;
        });
        terminal.type("echo ready\n");
        await terminal.waitFor("the shell answering", /ready\r?\n/);
        terminal.type("~.");
        expect(await terminal.exited).toBe(1);
        await waitFor("the shell gone", () => shells.every((pid) => !isRunning(pid)));
      });

      test("a client that vanishes takes the command with it", async () => {
        const alloc = await runningAlloc(driver);
        const mark = `${client.name}-${driver}-${process.pid}`;
        const child = Bun.spawn(exec("-i=false", alloc, "env", `DROVER_TEST_MARK=${mark}`, "sleep", "600"), { env, stdout: "ignore", stderr: "ignore" });
        const pids = await waitFor("the command running", () => {
          const found = pidsWithEnv("DROVER_TEST_MARK", mark);
          return found.length > 0 ? found : null;
        });
        child.kill("SIGKILL");
        await waitFor("the command gone", () => pids.every((pid) => !isRunning(pid)));
      });
    });
  }
}

describe("alloc exec: the CLIs' own rules", () => {
  test("drover's CLI takes flags after the allocation, up to \"--\"", async () => {
    const alloc = await runningAlloc("raw_exec");
    const result = await run([...agent.runtime.argv, "alloc", "exec", alloc, "-task", "main", "-i=false", "--", "sh", "-c", "echo $GREETING"]);
    expect(result).toEqual({ code: 0, stdout: "hello\n", stderr: "" });
  });

  test("-job picks a running allocation of the job, with both CLIs", async () => {
    await runningAlloc("raw_exec");
    for (const argv of [[...agent.runtime.argv], ...(NOMAD_BINARY ? [[NOMAD_BINARY]] : [])]) {
      const result = await run([...argv, "alloc", "exec", "-i=false", "-job", "raw_exec-box", "sh", "-c", "echo $NOMAD_JOB_NAME"]);
      expect(result).toEqual({ code: 0, stdout: "raw_exec-box\n", stderr: "" });
    }
  });

  test.skipIf(!NOMAD_BINARY)("Nomad's CLI prints the agent's reason when the task cannot exec", async () => {
    const alloc = await runningAlloc("raw_exec");
    const result = await run([...clients[0]!.argv, "alloc", "exec", "-i=false", alloc, "/no/such/command"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('failed to exec into task: command "/no/such/command": /no/such/command does not exist');
  });

  test("drover's CLI refuses -t without -i, as Nomad's does", async () => {
    const result = await run([...agent.runtime.argv, "alloc", "exec", "-t", "-i=false", "whatever", "true"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("-i must be enabled if running with tty");
  });
});

describe("the exec websocket itself", () => {
  interface Outcome {
    frames: { stdout?: { data?: string }; exited?: boolean; result?: { exit_code: number } }[];
    code: number;
    reason: string;
  }

  /** Opens the exec websocket, sends `frames` once open, and collects everything until it closes. */
  function session(alloc: string, query: Record<string, string>, frames: string[]): Promise<Outcome> {
    const socket = new WebSocket(`${agent.address.replace(/^http/, "ws")}/v1/client/allocation/${alloc}/exec?${new URLSearchParams(query)}`);
    const received: Outcome["frames"] = [];
    return new Promise((resolve) => {
      socket.onopen = () => frames.forEach((frame) => socket.send(frame));
      socket.onmessage = (event) => received.push(JSON.parse(String(event.data)));
      socket.onclose = (event) => resolve({ frames: received, code: event.code, reason: event.reason });
    });
  }

  test("a client that sends Nomad 1.x's handshake frame first is served", async () => {
    const alloc = await runningAlloc("raw_exec");
    const outcome = await session(alloc, { command: JSON.stringify(["sh", "-c", "exit 6"]), task: "main", ws_handshake: "true" }, [
      JSON.stringify({ version: 1, auth_token: "" }),
      JSON.stringify({ stdin: { close: true } }),
    ]);
    expect(outcome.frames.at(-1)).toEqual({ exited: true, result: { exit_code: 6 } });
    expect(outcome.code).toBe(1000);
  });

  test("a malformed frame closes the session with 1008 and ends the command", async () => {
    const alloc = await runningAlloc("raw_exec");
    const mark = `malformed-${process.pid}`;
    const socket = new WebSocket(`${agent.address.replace(/^http/, "ws")}/v1/client/allocation/${alloc}/exec?${new URLSearchParams({ command: JSON.stringify(["env", `DROVER_TEST_MARK=${mark}`, "sleep", "600"]), task: "main" })}`);
    const closed = new Promise<{ code: number; reason: string }>((resolve) => (socket.onclose = (event) => resolve({ code: event.code, reason: event.reason })));
    const pids = await waitFor("the command running", () => {
      const found = pidsWithEnv("DROVER_TEST_MARK", mark);
      return found.length > 0 ? found : null;
    });
    socket.send("not json");
    expect(await closed).toMatchObject({ code: 1008, reason: expect.stringContaining("malformed frame") });
    await waitFor("the command gone", () => pids.every((pid) => !isRunning(pid)));
  });

  test("an allocation that is not here closes with 1008 and says so", async () => {
    const outcome = await session("00000000-0000-0000-0000-000000000000", { command: JSON.stringify(["true"]), task: "main" }, []);
    expect(outcome).toMatchObject({ frames: [], code: 1008, reason: "allocation 00000000-0000-0000-0000-000000000000 is not on this node" });
  });

  test("a command that is not a JSON array is a 400 before any upgrade", async () => {
    const response = await fetch(`${agent.address}/v1/client/allocation/whatever/exec?command=ls&task=main`);
    expect(response.status).toBe(400);
    expect(await response.text()).toBe("command: must be a JSON array of strings");
  });
});

describe("POST /v1/client/allocation/:id/exec: what the caller gets wrong is never a 5xx", () => {
  const post = async (alloc: string, body: unknown) => {
    const res = await fetch(`${agent.address}/v1/client/allocation/${alloc}/exec`, { method: "POST", body: JSON.stringify(body) });
    return { status: res.status, text: await res.text() };
  };

  test("a command that is not there: exit code 127 and the reason on stderr, as a shell answers", async () => {
    const alloc = await runningAlloc("raw_exec");
    for (const command of ["/no/such/binary", "no-such-command"]) {
      const res = await post(alloc, { Task: "main", Cmd: [command] });
      expect(res.status).toBe(200);
      const result = JSON.parse(res.text) as { ExitCode: number; Stderr: string };
      expect(result.ExitCode).toBe(127);
      expect(result.Stderr).toContain(`command "${command}"`);
    }
  });

  test("a command that is there but cannot run (a plain file, a directory): exit code 126, as a shell answers", async () => {
    const alloc = await runningAlloc("raw_exec");
    for (const command of ["/etc/passwd", "/etc"]) {
      const res = await post(alloc, { Task: "main", Cmd: [command] });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toMatchObject({ ExitCode: 126, Stderr: expect.stringContaining(`command "${command}"`) });
    }
  });

  test("a NUL in an argument, or an argument of 3 MB: 400 naming it", async () => {
    const alloc = await runningAlloc("raw_exec");
    expect(await post(alloc, { Task: "main", Cmd: ["echo", "a\u0000b"] })).toMatchObject({ status: 400, text: expect.stringContaining("an argument must not contain NUL") });
    expect(await post(alloc, { Task: "main", Cmd: ["echo", "x".repeat(3 * 2 ** 20)] })).toMatchObject({ status: 400, text: expect.stringContaining("an argument must be at most 131072 bytes") });
  });
});
