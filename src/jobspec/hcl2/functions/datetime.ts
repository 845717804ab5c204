/** formatdate() and timeadd() over RFC 3339 timestamps, as cty's stdlib defines them. */
import { parseDuration } from "../../../lib/duration.ts";
import { asString, HclEvalError, type Value } from "../values.ts";
import { arg, arity, type FunctionTable } from "./args.ts";

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

interface Timestamp {
  /** Milliseconds since the epoch of the instant. */
  ms: number;
  /** The written offset from UTC in minutes, and its text ("Z" or "+02:00"). */
  offset: number;
  zone: string;
  fraction: string;
}

function parseTimestamp(text: string): Timestamp {
  const match = RFC3339.exec(text);
  if (!match) throw new HclEvalError(`${JSON.stringify(text)} is not an RFC 3339 timestamp (such as "2006-01-02T15:04:05Z")`);
  const zone = match[8]!.toUpperCase();
  const offset = zone === "Z" ? 0 : (zone.startsWith("-") ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const local = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]), Number(match[6]));
  const fraction = match[7] ?? "";
  return { ms: local - offset * 60_000 + Math.floor(Number(`0${fraction || ".0"}`) * 1000), offset, zone, fraction };
}

const two = (n: number) => String(n).padStart(2, "0");

function formatTimestamp(spec: string, ts: Timestamp): string {
  const local = new Date(ts.ms + ts.offset * 60_000);
  const hours = local.getUTCHours();
  const fields: Record<string, () => string> = {
    YYYY: () => String(local.getUTCFullYear()).padStart(4, "0"),
    YY: () => two(local.getUTCFullYear() % 100),
    MMMM: () => MONTHS[local.getUTCMonth()]!,
    MMM: () => MONTHS[local.getUTCMonth()]!.slice(0, 3),
    MM: () => two(local.getUTCMonth() + 1),
    M: () => String(local.getUTCMonth() + 1),
    DD: () => two(local.getUTCDate()),
    D: () => String(local.getUTCDate()),
    EEEE: () => DAYS[local.getUTCDay()]!,
    EEE: () => DAYS[local.getUTCDay()]!.slice(0, 3),
    hh: () => two(hours),
    h: () => String(hours),
    HH: () => two(hours % 12 === 0 ? 12 : hours % 12),
    H: () => String(hours % 12 === 0 ? 12 : hours % 12),
    AA: () => (hours < 12 ? "AM" : "PM"),
    aa: () => (hours < 12 ? "am" : "pm"),
    mm: () => two(local.getUTCMinutes()),
    m: () => String(local.getUTCMinutes()),
    ss: () => two(local.getUTCSeconds()),
    s: () => String(local.getUTCSeconds()),
    ZZZZZ: () => (ts.offset === 0 ? "+00:00" : ts.zone),
    ZZZZ: () => (ts.offset === 0 ? "+0000" : ts.zone.replace(":", "")),
    ZZZ: () => (ts.offset === 0 ? "UTC" : ts.zone.replace(":", "")),
    Z: () => (ts.offset === 0 ? "Z" : ts.zone),
  };
  const tokens = Object.keys(fields).sort((a, b) => b.length - a.length);
  let out = "";
  for (let i = 0; i < spec.length; ) {
    if (spec[i] === "'") {
      const end = spec.indexOf("'", i + 1);
      if (end === -1) throw new HclEvalError("the format has an unterminated quoted literal");
      out += end === i + 1 ? "'" : spec.slice(i + 1, end);
      i = end + 1;
      continue;
    }
    const token = tokens.find((candidate) => spec.startsWith(candidate, i));
    if (token) {
      out += fields[token]!();
      i += token.length;
    } else if (/[A-Za-z]/.test(spec[i]!)) {
      throw new HclEvalError(`invalid date format verb starting at "${spec.slice(i, i + 4)}"`);
    } else out += spec[i++];
  }
  return out;
}

/** Go's time.ParseDuration (with the sign timeadd takes: "-1h"), in milliseconds. */
function durationMs(text: string): number {
  const sign = /^[-+]/.exec(text)?.[0];
  let ms: number;
  try {
    ms = parseDuration(sign ? text.slice(1) : text);
  } catch {
    throw new HclEvalError(`${JSON.stringify(text)} is not a duration (such as "1h30m")`);
  }
  return sign === "-" ? -ms : ms;
}

function render(ts: Timestamp, ms: number): string {
  const local = new Date(ms + ts.offset * 60_000);
  const iso = local.toISOString().replace(/\.\d{3}Z$/, "");
  const fraction = ms % 1000 === 0 ? "" : `.${String(((ms % 1000) + 1000) % 1000).padStart(3, "0")}`.replace(/0+$/, "");
  return `${iso}${fraction}${ts.zone === "Z" ? "Z" : ts.zone}`;
}

export const datetimeFunctions: FunctionTable = {
  formatdate: arity(2, 2, (args: readonly Value[]) => formatTimestamp(asString(arg(args, 0)), parseTimestamp(asString(arg(args, 1))))),
  timeadd: arity(2, 2, (args: readonly Value[]) => {
    const ts = parseTimestamp(asString(arg(args, 0)));
    return render(ts, ts.ms + durationMs(asString(arg(args, 1))));
  }),
};
