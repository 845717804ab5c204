/**
 * Durations in Go's notation ("250ms", "30s", "1m30s", "1h"), the form Nomad's
 * job files and agent config use. Parsed to milliseconds.
 */

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  "µs": 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};

const PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/y;

/** Milliseconds in `text`; throws with the offending text on anything else. */
export function parseDuration(text: string): number {
  const input = text.trim();
  if (input === "0") return 0;
  if (input.length === 0) throw new Error('invalid duration ""');
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < input.length) {
    const start = PART.lastIndex;
    const match = PART.exec(input);
    if (!match || match.index !== start) {
      throw new Error(`invalid duration "${text}" (use Go notation such as "30s", "1m30s", "250ms")`);
    }
    total += Number(match[1]) * UNIT_MS[match[2]!]!;
  }
  return total;
}

/** Go's notation for `ms` milliseconds ("1m30s", "250ms", "0s"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1_000) return `${ms}ms`;
  let rest = ms;
  let out = "";
  const hours = Math.floor(rest / 3_600_000);
  if (hours) out += `${hours}h`;
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  if (minutes) out += `${minutes}m`;
  rest -= minutes * 60_000;
  if (rest) out += `${rest / 1_000}s`;
  return out;
}
