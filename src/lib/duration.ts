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

/** Go's own rendering of `ms` milliseconds: "1h30m0s", "30m0s", "1.5s", "250ms", "0s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1_000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  const seconds = (ms % 60_000) / 1_000;
  if (hours > 0) return `${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${minutes}m${seconds}s`;
  return `${seconds}s`;
}
