/** The logmon role inside the compiled binary (bytecode, bundled FFI): it starts, pumps and stops. */
import { afterAll, expect, test } from "bun:test";
import { closeSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openFifo } from "../../src/log-layout/fifo.ts";
import { roleHandshakeEnv } from "../../src/runtime/self.ts";
import { ensureBinary } from "../helpers/binary.ts";
import { tempDir } from "../helpers/index.ts";
import { killLeftovers, readLog, supervise, taskLogDir } from "./harness.ts";
import { DEFAULT_LOG_MAX_FILE_SIZE_MB, DEFAULT_LOG_MAX_FILES } from "../../src/lib/log-config.ts";

afterAll(killLeftovers);

test("dist/drover logmon pumps a task's FIFO into its log file and stops cleanly on SIGTERM", async () => {
  const binary = ensureBinary();
  const dir = tempDir("drover-lmbin-");
  const stateDir = join(dir, "logmon");
  // Started as the agent's supervisor would start it (spawnProcess would strip the handshake).
  const logmon = Bun.spawn([binary, "logmon", "--state-dir", stateDir, "--socket", join(stateDir, "logmon.sock")], {
    env: { ...process.env, ...roleHandshakeEnv() },
    stdout: "ignore",
    stderr: "ignore",
  });
  const { supervisor, client } = supervise(stateDir);
  const { logDir, fifos } = taskLogDir(join(dir, "a1"), "web");
  const spare = openFifo(fifos.stdout, "spare");
  const out = openFifo(fifos.stdout, "writer");
  try {
    // The supervisor attaches to this logmon rather than starting one of its own.
    await waitForSocket(() => supervisor.start().then(() => supervisor.logmonPid !== undefined));
    expect(supervisor.logmonPid).toBe(logmon.pid);
    await client.register({ id: "a1/web", logDir, taskName: "web", maxFiles: DEFAULT_LOG_MAX_FILES, maxFileSizeMB: DEFAULT_LOG_MAX_FILE_SIZE_MB });
    writeSync(out, "from the compiled logmon\n");
    await client.flush("a1/web");
    expect(readLog(logDir, "web", "stdout")).toBe("from the compiled logmon\n");
    await supervisor.terminate();
    expect(await logmon.exited).toBe(0);
  } finally {
    logmon.kill("SIGKILL");
    closeSync(out);
    closeSync(spare);
  }
}, 60_000);

async function waitForSocket(attached: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await attached()) return;
    await Bun.sleep(25);
  }
  throw new Error("the compiled logmon never listened");
}
