/**
 * Output in the shape Nomad's CLI prints: `Key = value` blocks aligned on
 * the `=`, tables with columns two spaces apart, local RFC 3339 times, and
 * ages such as "3m12s ago".
 */

/** `Key = value` lines with the `=` aligned (Nomad's formatKV). */
export function formatKV(pairs: readonly (readonly [string, string])[]): string {
  const width = Math.max(0, ...pairs.map(([key]) => key.length));
  return pairs.map(([key, value]) => `${key.padEnd(width)} = ${value}`).join("\n");
}

/** A table: the first row is the header; columns are padded two spaces apart (Nomad's formatList). */
export function formatList(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ").trimEnd())
    .join("\n");
}

const pad = (value: number, width = 2) => String(value).padStart(width, "0");

/** Local time as Nomad prints it: 2006-01-02T15:04:05-07:00. */
export function formatTime(date: Date): string {
  const offset = -date.getTimezoneOffset();
  const zone = offset === 0 ? "Z" : `${offset > 0 ? "+" : "-"}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${zone}`
  );
}

/** A time in nanoseconds since the epoch (CreateTime, SubmitTime). */
export function formatNanos(nanos: number): string {
  return formatTime(new Date(nanos / 1e6));
}

/** "1h2m ago", "12s ago": the two largest units, as Nomad's prettyTimeDiff. */
export function timeAgo(then: Date, now = new Date()): string {
  let seconds = Math.max(0, Math.round((now.getTime() - then.getTime()) / 1000));
  const units: [string, number][] = [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ];
  const parts: string[] = [];
  for (const [unit, size] of units) {
    if (parts.length === 2) break;
    const count = Math.floor(seconds / size);
    if (count > 0 || (unit === "s" && parts.length === 0)) parts.push(`${count}${unit}`);
    seconds -= count * size;
  }
  return `${parts.join("")} ago`;
}

export function nanosAgo(nanos: number): string {
  return timeAgo(new Date(nanos / 1e6));
}

/** "300 MiB", "1.5 GiB" for a size in MB (Nomad reports memory and disk in MiB). */
export function formatMb(mb: number): string {
  if (mb >= 1024) return `${(mb / 1024).toFixed(1).replace(/\.0$/, "")} GiB`;
  return `${mb} MiB`;
}

const IEC_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** "816 KiB", "3.1 MiB" for a size in bytes, rounded as Nomad's CLI rounds (go-humanize's IBytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 10) return `${bytes} B`;
  const exponent = Math.min(Math.floor(Math.log(bytes) / Math.log(1024)), IEC_UNITS.length - 1);
  const value = Math.floor((bytes / 1024 ** exponent) * 10 + 0.5) / 10;
  return `${value < 10 ? value.toFixed(1) : value.toFixed(0)} ${IEC_UNITS[exponent]}`;
}

/** The short form of an ID (Nomad shows the first 8 characters unless -verbose). */
export function shortId(id: string, verbose = false): string {
  return verbose ? id : id.slice(0, 8);
}

/** Nomad prints `<none>` for an empty value. */
export function orNone(value: string): string {
  return value === "" ? "<none>" : value;
}

/** Go's Duration.String() of whole seconds: "45s", "35m7s", "26h3m0s". */
export function goDuration(totalSeconds: number): string {
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  return hours > 0 ? `${hours}h${minutes}m${seconds}s` : minutes > 0 ? `${minutes}m${seconds}s` : `${seconds}s`;
}
