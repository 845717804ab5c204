/**
 * Structured logging with pino, written synchronously: pino's worker-thread
 * transports do not run inside a compiled binary, and an async destination
 * loses its last lines when the process exits right after logging.
 *
 * JSON lines when asked (-log-json) or when stderr is not a terminal;
 * human-readable lines (pino-pretty, in-process) on a terminal.
 */
import pino, { type Logger } from "pino";
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

export async function createLogger(options: LoggerOptions): Promise<Logger> {
  const fd = options.fd ?? 2;
  const base = { level: LOG_LEVELS[options.level], name: options.name, base: { pid: process.pid } };
  if (writesJson(options)) return pino(base, pino.destination({ fd, sync: true }));
  const { default: pinoPretty } = await import("pino-pretty");
  return pino(base, pinoPretty({ destination: fd, sync: true, ignore: "pid,hostname", translateTime: "SYS:standard" }));
}

/** Changes the level of a running logger (SIGHUP reload). */
export function setLogLevel(logger: Logger, level: LogLevel): void {
  logger.level = LOG_LEVELS[level];
}
