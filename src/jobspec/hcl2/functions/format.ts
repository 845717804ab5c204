/**
 * cty's format(): printf-style verbs (%s %d %f %e %g %t %q %v %x %X %o %b
 * %%), flags (- + 0 space), width, precision and explicit argument indexes
 * (%[2]s), over HCL values.
 */
import { asBool, asNumber, asString, HclEvalError, numberToString, type Value } from "../values.ts";

const VERB = /%([-+ 0#]*)(?:\[(\d+)\])?(\d+|\*)?(?:\.(\d+))?([a-zA-Z%])/g;

function pad(text: string, width: number | undefined, flags: string, numeric: boolean): string {
  if (width === undefined || text.length >= width) return text;
  if (flags.includes("-")) return text.padEnd(width);
  if (flags.includes("0") && numeric) {
    const sign = /^[+-]/.test(text) ? text[0]! : "";
    return sign + text.slice(sign.length).padStart(width - sign.length, "0");
  }
  return text.padStart(width);
}

function signed(n: number, text: string, flags: string): string {
  if (n >= 0 && flags.includes("+")) return `+${text}`;
  if (n >= 0 && flags.includes(" ")) return ` ${text}`;
  return text;
}

function integer(value: Value, verb: string): number {
  const n = asNumber(value, `%${verb}: a number`);
  if (!Number.isInteger(n)) throw new HclEvalError(`%${verb} needs a whole number, got ${numberToString(n)}`);
  return n;
}

/** Go's %g: shortest of %e and %f, with exponents of at least two digits. */
function general(n: number, precision: number | undefined): string {
  const text = precision === undefined ? String(n) : n.toPrecision(precision);
  return text.replace(/e([+-])(\d)$/, "e$10$2");
}

function render(verb: string, value: Value, flags: string, precision: number | undefined): { text: string; numeric: boolean } {
  switch (verb) {
    case "s":
    case "v": {
      if (typeof value === "object" && value !== null) return { text: JSON.stringify(value), numeric: false };
      const text = asString(value, `%${verb}: a string`);
      return { text: precision === undefined ? text : [...text].slice(0, precision).join(""), numeric: false };
    }
    case "q":
      return { text: JSON.stringify(asString(value, "%q: a string")), numeric: false };
    case "t":
      return { text: String(asBool(value, "%t: a bool")), numeric: false };
    case "d": {
      const n = integer(value, verb);
      return { text: signed(n, n.toFixed(0), flags), numeric: true };
    }
    case "x":
    case "X":
    case "o":
    case "b": {
      const n = integer(value, verb);
      const radix = verb === "o" ? 8 : verb === "b" ? 2 : 16;
      const text = n.toString(radix);
      return { text: signed(n, verb === "X" ? text.toUpperCase() : text, flags), numeric: true };
    }
    case "f":
    case "F": {
      const n = asNumber(value, `%${verb}: a number`);
      return { text: signed(n, n.toFixed(precision ?? 6), flags), numeric: true };
    }
    case "e":
    case "E": {
      const n = asNumber(value, `%${verb}: a number`);
      const text = n.toExponential(precision ?? 6).replace(/e([+-])(\d)$/, "e$10$2");
      return { text: signed(n, verb === "E" ? text.toUpperCase() : text, flags), numeric: true };
    }
    case "g":
    case "G": {
      const n = asNumber(value, `%${verb}: a number`);
      const text = general(n, precision);
      return { text: signed(n, verb === "G" ? text.toUpperCase() : text, flags), numeric: true };
    }
    default:
      throw new HclEvalError(`unsupported format verb %${verb}`);
  }
}

export function format(spec: string, args: readonly Value[]): string {
  let next = 0;
  let used = 0;
  const out = spec.replace(VERB, (_, flags: string, index: string | undefined, width: string | undefined, precision: string | undefined, verb: string) => {
    if (verb === "%") return "%";
    if (index !== undefined) next = Number(index) - 1;
    let widthValue: number | undefined;
    if (width === "*") widthValue = asNumber(args[next++] ?? null, "a width");
    else if (width !== undefined) widthValue = Number(width);
    if (next >= args.length) throw new HclEvalError(`not enough arguments for the format "${spec}"`);
    const value = args[next++]!;
    used = Math.max(used, next);
    const { text, numeric } = render(verb, value, flags, precision === undefined ? undefined : Number(precision));
    return pad(text, widthValue, flags, numeric);
  });
  if (used < args.length) throw new HclEvalError(`too many arguments for the format "${spec}"`);
  return out;
}
