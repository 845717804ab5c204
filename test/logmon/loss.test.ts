/**
 * The headline guarantee: SIGKILL the logmon twice under a writer of numbered
 * lines; every line arrives exactly once and in order, and the writer (the
 * task) is never killed, because its executor's spare descriptor keeps the
 * pipe alive and splice(2) never holds bytes outside the pipe or the file.
 */
import { afterAll, expect, test } from "bun:test";
import { statSync } from "node:fs";
import { join } from "node:path";
import { logFileIndexes } from "../../src/log-layout/layout.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { killLeftovers, lineNumbers, readLog, startWriter, supervise, taskLogDir } from "./harness.ts";

afterAll(killLeftovers);

/** 3M lines of 20 bytes: 60 MB, written as fast as the pipe takes them, so the logmon is mid-move when killed. */
const LINES = 3_000_000;
const WIDTH = 20;

function bytesLogged(logDir: string): number {
  return logFileIndexes(logDir, "web", "stdout").reduce((sum, index) => sum + statSync(join(logDir, `web.stdout.${index}`)).size, 0);
}

test("SIGKILL of the logmon twice under a writer loses no line, duplicates none, and never kills the writer", async () => {
  const dir = tempDir("drover-loss-");
  const { supervisor, client, events } = supervise(join(dir, "logmon"));
  const { logDir, fifos } = taskLogDir(join(dir, "a1"), "web");
  try {
    await client.register({ id: "a1/web", logDir, taskName: "web", maxFiles: 1000, maxFileSizeMB: 1 });
    const writer = startWriter(fifos.stdout, LINES, { batch: 5_000, width: WIDTH });

    const connections = () => events.filter((event) => event.kind === "connected").length;
    for (const threshold of [10_000_000, 30_000_000]) {
      await waitFor(`${threshold} bytes logged`, () => bytesLogged(logDir) >= threshold, { timeoutMs: 30_000 });
      const before = connections();
      process.kill(supervisor.logmonPid!, "SIGKILL");
      await waitFor("the supervisor to restart the logmon and reconnect", () => connections() > before);
    }

    expect(await writer.exited).toEqual({ exitCode: 0, signal: 0 });
    await client.flush("a1/web");
    const numbers = lineNumbers(readLog(logDir, "web", "stdout"));
    expect(numbers.length).toBe(LINES);
    const outOfPlace = numbers.findIndex((n, i) => n !== i);
    expect(outOfPlace).toBe(-1);
    expect(events.filter((event) => event.kind === "lost").length).toBe(2);
  } finally {
    await supervisor.terminate();
  }
}, 60_000);
