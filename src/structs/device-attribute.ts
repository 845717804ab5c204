/**
 * Typed device attributes as Nomad reads and compares them (its
 * plugins/shared/structs): a literal in a constraint ("4 GiB", "1.5",
 * "true", "Tesla T4") becomes an attribute, and two attributes compare only
 * when their kinds agree: strings with strings, booleans with booleans,
 * numbers with numbers whose units share a base (MiB with GB, MHz with
 * GHz), each scaled to the base unit first.
 */
import type { Attribute } from "./device.ts";

type Base = "byte" | "byte_rate" | "hertz" | "watt";

interface Unit {
  base: Base;
  /** Base units per one of this unit. */
  scale: number;
}

const POWERS_1024 = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
const POWERS_1000 = ["k", "M", "G", "T", "P", "E"];

function byteUnits(suffix: string, base: Base): Record<string, Unit> {
  const out: Record<string, Unit> = {};
  POWERS_1024.forEach((prefix, i) => (out[`${prefix}B${suffix}`] = { base, scale: 1024 ** (i + 1) }));
  POWERS_1000.forEach((prefix, i) => (out[`${prefix}B${suffix}`] = { base, scale: 1000 ** (i + 1) }));
  // Nomad accepts "KB" as another spelling of "kB".
  out[`KB${suffix}`] = { base, scale: 1000 };
  return out;
}

/** Nomad's UnitIndex. */
const UNITS: Readonly<Record<string, Unit>> = {
  ...byteUnits("", "byte"),
  ...byteUnits("/s", "byte_rate"),
  MHz: { base: "hertz", scale: 1e6 },
  GHz: { base: "hertz", scale: 1e9 },
  mW: { base: "watt", scale: 1e-3 },
  W: { base: "watt", scale: 1 },
  kW: { base: "watt", scale: 1e3 },
  MW: { base: "watt", scale: 1e6 },
  GW: { base: "watt", scale: 1e9 },
};

/** Longest first, so "MiB/s" is found before "B/s"-like shorter endings. */
const UNITS_BY_LENGTH = Object.keys(UNITS).sort((a, b) => b.length - a.length);

/** A constraint's literal as an attribute (Nomad's ParseAttribute): a number with an optional unit, a boolean, or a string. */
export function parseAttribute(text: string): Attribute {
  let numeric = text;
  let unit = "";
  if (/[A-Za-z]$/.test(text)) {
    const found = UNITS_BY_LENGTH.find((name) => text.endsWith(name));
    if (found) {
      unit = found;
      numeric = text.slice(0, -found.length).trim();
    }
  }
  if (/^[+-]?\d+$/.test(numeric)) return { Int: Number(numeric), Unit: unit };
  if (numeric !== "" && /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(numeric)) return { Float: Number(numeric), Unit: unit };
  // Go's strconv.ParseBool spellings.
  if (["1", "t", "T", "TRUE", "true", "True"].includes(text)) return { Bool: true, Unit: "" };
  if (["0", "f", "F", "FALSE", "false", "False"].includes(text)) return { Bool: false, Unit: "" };
  return { String: text, Unit: "" };
}

function numberOf(attribute: Attribute): number | undefined {
  const value = attribute.Int ?? attribute.Float;
  if (value === undefined) return undefined;
  return value * (UNITS[attribute.Unit]?.scale ?? 1);
}

/**
 * -1, 0 or 1 as `a` is below, equal to or above `b`; undefined when they
 * cannot be compared (different kinds, or units of different bases).
 */
export function compareAttributes(a: Attribute, b: Attribute): number | undefined {
  const unitA = UNITS[a.Unit];
  const unitB = UNITS[b.Unit];
  if ((unitA === undefined) !== (unitB === undefined)) return undefined;
  if (unitA && unitB && unitA.base !== unitB.base) return undefined;
  if (a.String !== undefined) return b.String === undefined ? undefined : Math.sign(a.String < b.String ? -1 : a.String > b.String ? 1 : 0);
  if (a.Bool !== undefined) return b.Bool === undefined ? undefined : a.Bool === b.Bool ? 0 : 1;
  const left = numberOf(a);
  const right = numberOf(b);
  if (left === undefined || right === undefined) return undefined;
  return Math.sign(left - right);
}
