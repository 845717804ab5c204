/** How the UI writes sizes, times and amounts; Nomad's UI's conventions (MiB, MHz, relative times). */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

export function bytes(value: number): string {
  let amount = value;
  let unit = 0;
  while (Math.abs(amount) >= 1024 && unit < UNITS.length - 1) {
    amount /= 1024;
    unit++;
  }
  return `${amount >= 100 || unit === 0 ? Math.round(amount) : amount.toFixed(1)} ${UNITS[unit]}`;
}

export function mhz(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} GHz` : `${Math.round(value)} MHz`;
}

export function percent(value: number): string {
  return `${value.toFixed(value < 10 ? 1 : 0)} %`;
}

/** Nomad's times: nanoseconds since the epoch (numbers) or RFC 3339 strings. */
function toDate(value: number | string | null | undefined): Date | undefined {
  if (value === null || value === undefined || value === 0 || value === "") return undefined;
  const date = typeof value === "number" ? new Date(value / 1e6) : new Date(value);
  return Number.isNaN(date.getTime()) || date.getFullYear() < 1971 ? undefined : date;
}

export function dateTime(value: number | string | null | undefined): string {
  const date = toDate(value);
  return date ? date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }) : "—";
}

/** The time alone for today's moments, the date too for older ones. */
export function timeOfDay(value: number | string | null | undefined, now = new Date()): string {
  const date = toDate(value);
  if (!date) return "—";
  const time = date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
  return date.toDateString() === now.toDateString() ? time : `${date.toLocaleDateString(undefined, { month: "short", day: "numeric" })} ${time}`;
}

export function ago(value: number | string | null | undefined, now = Date.now()): string {
  const date = toDate(value);
  if (!date) return "—";
  const seconds = Math.round((now - date.getTime()) / 1000);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

export function shortId(id: string): string {
  return id.slice(0, 8);
}
