/**
 * Structured logging with pino, written synchronously: pino's worker-thread
 * transports do not run inside a compiled binary, and an async destination
 * loses its last lines when the process exits right after logging.
 *
 * JSON lines when asked (-log-json) or when stderr is not a terminal;
 * human-readable lines (pino-pretty, in-process) on a terminal.
 *
 * Every record goes through a fan-out that writes it to the output when it
 * reaches the configured level, and to each tap (`nomad monitor`) that asks
 * for its level. Taps may want more than the output (DEBUG while the agent
 * logs at INFO), and child loggers keep the level they were made with, so
 * the loggers themselves let everything through and the fan-out filters.
 *
 *   logger.debug(...) ──> JSON line ──> fan-out ──level ≥ configured──> stderr (or pino-pretty)
 *                                          └──level ≥ tap's──> each tap
 */
import pino, { type DestinationStream, type Logger } from "pino";
import { LOG_LEVELS, type LogLevel } from "./log-levels.ts";

export type { Logger };

export interface LoggerOptions {
  level: LogLevel;
  json: boolean;
  /** File descriptor to write to; the agent uses stderr (2), helper roles their log file. */
  fd?: number;
  name?: string;
}

/** Whether a logger made with these options writes JSON lines: asked to, or not on a terminal. */
export function writesJson(options: Pick<LoggerOptions, "json" | "fd">): boolean {
  return options.json || (options.fd ?? 2) !== 2 || !process.stderr.isTTY;
}

/** pino's numeric value of a Nomad level name ("OFF": never). */
export function levelValue(level: LogLevel): number {
  const name = LOG_LEVELS[level];
  return name === "silent" ? Number.POSITIVE_INFINITY : pino.levels.values[name]!;
}

interface Tap {
  level: number;
  write(line: string): void;
}

/** A pino destination that filters by level per receiver; pino tells it each record's level (lastLevel). */
class LogFanout implements DestinationStream {
  lastLevel = 0;
  readonly taps = new Set<Tap>();

  constructor(
    private readonly output: DestinationStream,
    public outputLevel: number,
  ) {
    // The mark that makes pino set lastLevel before each write.
    Object.defineProperty(this, Symbol.for("pino.metadata"), { value: true });
  }

  write(line: string): void {
    if (this.lastLevel >= this.outputLevel) this.output.write(line);
    for (const tap of this.taps) if (this.lastLevel >= tap.level) tap.write(line);
  }
}

const fanouts = new WeakMap<Logger, LogFanout>();

export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const fd = options.fd ?? 2;
  const base = { level: "trace", name: options.name, base: { pid: process.pid } };
  let output: DestinationStream;
  if (!writesJson(options)) {
    const { default: pinoPretty } = await import("pino-pretty");
    output = pinoPretty({ destination: fd, sync: true, ignore: "pid,hostname", translateTime: "SYS:standard" });
  } else {
    output = pino.destination({ fd, sync: true });
  }
  const fanout = new LogFanout(output, levelValue(options.level));
  const logger = pino(base, fanout);
  fanouts.set(logger, fanout);
  return logger;
}

/** Changes what a running logger writes to its output (SIGHUP reload); its children follow. */
export function setLogLevel(logger: Logger, level: LogLevel): void {
  const fanout = fanouts.get(logger);
  if (fanout) fanout.outputLevel = levelValue(level);
  else logger.level = LOG_LEVELS[level];
}

/**
 * Calls `onLine` with every JSON line `logger` (or a child) writes at
 * `level` or above, whatever the output's level, until the returned
 * function is called.
 */
export function tapLogs(logger: Logger, level: LogLevel, onLine: (line: string) => void): () => void {
  const fanout = fanouts.get(logger);
  if (!fanout) throw new Error("tapLogs: the logger was not made by createLogger");
  const tap: Tap = { level: levelValue(level), write: onLine };
  fanout.taps.add(tap);
  return () => fanout.taps.delete(tap);
}
