/** Nomad's log levels, and the pino level each maps to. */
export const LOG_LEVELS = {
  TRACE: "trace",
  DEBUG: "debug",
  INFO: "info",
  WARN: "warn",
  ERR: "error",
  ERROR: "error",
  OFF: "silent",
} as const;

export type LogLevel = keyof typeof LOG_LEVELS;
