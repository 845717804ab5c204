/** Shared by the logmon tests: a supervised logmon in a temp dir, task FIFOs, writers, and reading logs back. */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { LogmonClient } from "../../src/client/logmon/client.ts";
import { createTaskFifos } from "../../src/log-layout/fifo.ts";
import { logFileIndexes, logFileName, type LogType } from "../../src/log-layout/layout.ts";
import { LogmonSupervisor, type LogmonEvent, type LogmonSupervisorOptions } from "../../src/client/logmon/supervisor.ts";
import { spawnProcess, type ChildProcess } from "../../src/runtime/spawn.ts";
import { StartedProcesses } from "../helpers/index.ts";

const WRITER = resolve(import.meta.dir, "fixtures/writer.ts");

/** Every logmon and writer a test saw. */
const seen = new StartedProcesses();

/**
 * SIGKILLs every logmon and writer still running, in case a test failed
 * midway. Each test file registers it with afterAll itself: this module is
 * loaded once per `bun test` run, so a hook registered here would run after
 * the first file only.
 */
export function killLeftovers(): void {
  seen.killLeftovers();
}

export interface Harness {
  supervisor: LogmonSupervisor;
  client: LogmonClient;
  events: LogmonEvent[];
}

export function supervise(stateDir: string, options: Partial<LogmonSupervisorOptions> = {}): Harness {
  const events: LogmonEvent[] = [];
  const supervisor = new LogmonSupervisor({
    ...options,
    stateDir,
    onEvent(event) {
      events.push(event);
      if ("pid" in event && event.pid !== undefined) seen.add(event.pid);
    },
  });
  return { supervisor, client: new LogmonClient(supervisor), events };
}

/** Creates the task's FIFOs in `<allocDir>/alloc/logs`; returns the log dir and the FIFO paths. */
export function taskLogDir(allocDir: string, taskName: string) {
  const logDir = join(allocDir, "alloc", "logs");
  return { logDir, fifos: createTaskFifos(logDir, taskName) };
}

export interface WriterOptions {
  batch?: number;
  pauseMs?: number;
  width?: number;
  forever?: boolean;
}

/** Starts the fixture writer on `fifo` (it holds a spare descriptor, as an executor does). */
export function startWriter(fifo: string, count: number, options: WriterOptions = {}): ChildProcess {
  const argv = [process.execPath, WRITER, fifo, String(count)];
  if (options.batch) argv.push("--batch", String(options.batch));
  if (options.pauseMs) argv.push("--pause-ms", String(options.pauseMs));
  if (options.width) argv.push("--width", String(options.width));
  if (options.forever) argv.push("--forever");
  const child = spawnProcess({ argv, env: process.env, stderr: "inherit" });
  seen.add(child.pid);
  return child;
}

/** The stream's rotated files concatenated in index order. */
export function readLog(logDir: string, taskName: string, type: LogType): string {
  return logFileIndexes(logDir, taskName, type)
    .map((index) => readFileSync(join(logDir, logFileName(taskName, type, index)), "utf8"))
    .join("");
}

/** The fixture writer's line numbers found in `text`, in order. */
export function lineNumbers(text: string): number[] {
  return text
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => Number(line.slice(0, 8)));
}
