/**
 * Nomad's cron specs (gorhill/cronexpr, which Nomad uses) evaluated with
 * croner: 5 fields (minute hour day-of-month month day-of-week), 6 (plus
 * year), or 7 (second first, year last); `@yearly`, `@monthly`, `@weekly`,
 * `@daily`, `@hourly`; names, ranges, steps, L, W, #; day-of-month and
 * day-of-week ORed when both are set. croner reads the 7-field form, so
 * shorter specs are widened to it (second 0, year *), and it resolves a
 * spec in an IANA time zone.
 */
import { Cron } from "croner";

/** The spec as croner's 7-field pattern (predefined `@` specs pass through). */
function widened(spec: string): string {
  const text = spec.trim();
  if (text.startsWith("@")) return text;
  const fields = text.split(/\s+/);
  if (fields.length === 5) return `0 ${text} *`;
  if (fields.length === 6) return `0 ${text}`;
  return text;
}

/** Why `timeZone` is not a time zone, or undefined. */
export function timeZoneProblem(timeZone: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return undefined;
  } catch {
    return `invalid time zone "${timeZone}"`;
  }
}

/** A parsed spec, or the reason it does not parse. */
export function parseCron(spec: string, timeZone = "UTC"): Cron | string {
  const fields = spec.trim().split(/\s+/);
  if (!spec.trim().startsWith("@") && (fields.length < 5 || fields.length > 7)) {
    return `invalid cron spec "${spec}": expected 5 to 7 fields, got ${fields.length}`;
  }
  const zone = timeZoneProblem(timeZone);
  if (zone) return zone;
  try {
    return new Cron(widened(spec), { timezone: timeZone, paused: true, mode: spec.trim().startsWith("@") ? "auto" : "7-part" });
  } catch (err) {
    return `invalid cron spec "${spec}": ${(err as Error).message}`;
  }
}

/** The first time after `after` (ms since the epoch) the spec fires, or undefined (never again, or unparsable). */
export function nextCronTime(spec: string, timeZone: string, after: number): number | undefined {
  const cron = parseCron(spec, timeZone || "UTC");
  if (typeof cron === "string") return undefined;
  return cron.nextRun(new Date(after))?.getTime();
}
