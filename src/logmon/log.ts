/**
 * The logmon's own log: one JSON object per line on stderr, which the
 * supervisor points at the logmon's log file. A few lines per task lifetime,
 * so plain synchronous writes; no logging library in this process.
 */
import { writeSync } from "node:fs";

export type Level = "info" | "warn" | "error";

export function log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });
  try {
    writeSync(2, `${line}\n`);
  } catch {
    // A log that cannot be written must not stop the pump.
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
