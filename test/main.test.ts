import { describe, expect, test } from "bun:test";
import { spawnProcess } from "../src/runtime/spawn.ts";
import { selfArgv } from "../src/runtime/self.ts";
import { closeSync, readSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { bytesReadable, fcntl, F_GETPIPE_SZ, O_CLOEXEC_FLAG, pipe2 } from "../src/runtime/libc.ts";
import { join } from "node:path";
import { isRunning, sleep, tempDir, waitFor } from "./helpers/index.ts";

async function run(args: string[], env: Record<string, string> = {}) {
  const child = spawnProcess({ argv: selfArgv(args), env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  const [status, stdout, stderr] = await Promise.all([
    child.exited,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  return { code: status.exitCode, stdout, stderr };
}

describe("role dispatch", () => {
  test("version prints the version line", async () => {
    const result = await run(["version"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^drover v\d+\.\d+\.\d+ \(\S+\)\n$/);
  });

  test("no command prints usage and fails; an unknown one is named", async () => {
    expect((await run([])).code).toBe(1);
    const unknown = await run(["frobnicate"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
  });

  for (const role of ["executor", "logmon", "nsenter"]) {
    test(`drover ${role} started by hand says it is internal and exits 1`, async () => {
      const result = await run([role]);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`drover ${role} is an internal role`);
    });

    test(`drover ${role} with a forged-looking handshake value is still refused`, async () => {
      const result = await run([role], { DROVER_ROLE_HANDSHAKE: "1" });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("internal role");
    });
  }

  test("children never see BUN_* variables, the role handshake or the ready fd's name", async () => {
    const env = { ...process.env, BUN_OPTIONS: "--smol", BUN_CONFIG_X: "1", DROVER_ROLE_HANDSHAKE: "x", DROVER_READY_FD: "3", KEEP_ME: "yes" };
    const shell = spawnProcess({ argv: ["/usr/bin/env"], env, stdout: "pipe" });
    const text = await new Response(shell.stdout).text();
    await shell.exited;
    expect(text).toContain("KEEP_ME=yes");
    expect(text).not.toMatch(/^BUN_/m);
    expect(text).not.toContain("DROVER_ROLE_HANDSHAKE");
    expect(text).not.toContain("DROVER_READY_FD");
  });
});

describe("a ready pipe", () => {
  const dir = tempDir("drover-ready-");
  /** Settles to true once `promise` has settled; false until then. */
  const settledFlag = (promise: Promise<unknown>) => {
    const flag = { settled: false };
    void promise.then(() => (flag.settled = true));
    return flag;
  };

  test("ready settles when the child closes its fd 3, not before, and the child runs on", async () => {
    const go = join(dir, "close-now");
    const script = `while [ ! -e ${go} ]; do sleep 0.01; done; exec 3>&-; exec sleep 600`;
    const child = spawnProcess({ argv: ["/bin/sh", "-c", script], env: {}, readyPipe: true });
    try {
      const ready = settledFlag(child.ready!);
      await sleep(100);
      expect(ready.settled).toBe(false);
      writeFileSync(go, "");
      await child.ready;
      expect(isRunning(child.pid)).toBe(true);
    } finally {
      child.kill("SIGKILL");
      await child.exited;
    }
  });

  test("a child that dies without closing it settles ready too", async () => {
    const go = join(dir, "exit-now");
    const child = spawnProcess({ argv: ["/bin/sh", "-c", `while [ ! -e ${go} ]; do sleep 0.01; done; exit 4`], env: {}, readyPipe: true });
    const ready = settledFlag(child.ready!);
    await sleep(100);
    expect(ready.settled).toBe(false);
    writeFileSync(go, "");
    await child.ready;
    expect((await child.exited).exitCode).toBe(4);
  });

  test("without one, a child has no fd 3 and no ready", async () => {
    const plain = spawnProcess({ argv: ["/bin/sh", "-c", "test -e /proc/self/fd/3 && echo open || echo none"], env: {}, stdout: "pipe" });
    expect(plain.ready).toBeUndefined();
    expect(await new Response(plain.stdout).text()).toBe("none\n");
  });
});

describe("starting a role", () => {
  test("spawnSelf passes the handshake, so the role runs instead of refusing", async () => {
    const { spawnSelf } = await import("../src/runtime/spawn.ts");
    // An unknown flag reaches the role's own argument handling only past the handshake.
    const child = spawnSelf("logmon", ["--definitely-not-a-flag"], { env: process.env, stderr: "pipe" });
    const [status, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    expect(stderr).not.toContain("is an internal role");
    expect(status.exitCode).not.toBe(0);
  });
});

/** A fake agent on a free port; `answer` writes each response. */
async function fakeAgent(answer: (path: string, response: ServerResponse) => void) {
  const open: ServerResponse[] = [];
  const agent = createServer((request, response) => {
    open.push(response);
    answer(new URL(request.url ?? "/", "http://agent").pathname, response);
  });
  await new Promise<void>((resolve) => agent.listen(0, "127.0.0.1", resolve));
  return {
    address: `http://127.0.0.1:${(agent.address() as AddressInfo).port}`,
    close: () => {
      for (const response of open) response.destroy();
      agent.close();
    },
  };
}

describe("output to a pipe", () => {
  test("a reader that goes away ends the command quietly with the broken-pipe status, not an internal error", async () => {
    // The agent's log stream never ends: the command writes until its output
    // breaks, so only the broken pipe can end it.
    const agent = await fakeAgent((_path, response) => {
      response.writeHead(200, { "Content-Type": "text/plain" });
      response.write("agent log line\n".repeat(8192));
    });
    // The read end is closed before the command starts: its first write fails, every time.
    const [readFd, writeFd] = pipe2(O_CLOEXEC_FLAG);
    closeSync(readFd);
    try {
      const child = spawnProcess({ argv: selfArgv(["monitor", "-address", agent.address]), env: process.env, stdout: writeFd, stderr: "pipe" });
      closeSync(writeFd);
      const [status, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      expect(stderr).toBe("");
      expect(status.exitCode).toBe(128 + 13);
    } finally {
      agent.close();
    }
  });

  test("a reader slower than the command still gets all of its output", async () => {
    const jobCount = 2000;
    const jobs = Array.from({ length: jobCount }, (_, i) => ({
      ID: `job-${i}`, Name: `job-${i}`, Namespace: "default", Type: "service", Priority: 50, Status: "running", SubmitTime: 0,
    }));
    const agent = await fakeAgent((_path, response) => {
      response.writeHead(200, { "Content-Type": "application/json", "X-Nomad-Index": "1" });
      response.end(JSON.stringify(jobs));
    });
    const [readFd, writeFd] = pipe2(O_CLOEXEC_FLAG);
    try {
      const child = spawnProcess({ argv: selfArgv(["job", "status", "-address", agent.address]), env: process.env, stdout: writeFd });
      closeSync(writeFd);
      // Nothing is read until the pipe is full: the rest of the list waits in the command.
      const capacity = fcntl(readFd, F_GETPIPE_SZ);
      await waitFor("the pipe to fill", () => bytesReadable(readFd) >= capacity);
      const chunks: Buffer[] = [];
      const buffer = Buffer.alloc(capacity);
      for (let n = readSync(readFd, buffer); n > 0; n = readSync(readFd, buffer)) chunks.push(Buffer.from(buffer.subarray(0, n)));
      const lines = Buffer.concat(chunks).toString().trimEnd().split("\n");
      expect(lines).toHaveLength(1 + jobCount);
      expect(lines.at(-1)).toStartWith(`job-${jobCount - 1} `);
      expect((await child.exited).exitCode).toBe(0);
    } finally {
      closeSync(readFd);
      agent.close();
    }
  });
});
