/** cty's string functions, as Nomad's jobspec2 registers them. */
import { asList, asNumber, asString, HclEvalError, type Value } from "../values.ts";
import { arg, arity, type FunctionTable } from "./args.ts";
import { format } from "./format.ts";

const str = (args: readonly Value[], i: number) => asString(arg(args, i));

/** Characters as HCL counts them (code points; combining marks are not split off here). */
const characters = (text: string): string[] => [...text];

/** Go's regexp syntax as JavaScript takes it: named groups `(?P<n>` become `(?<n>`. */
export function goRegExp(pattern: string, flags = "u"): RegExp {
  try {
    return new RegExp(pattern.replace(/\(\?P</g, "(?<"), flags);
  } catch (err) {
    throw new HclEvalError(`invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
}

function substr(text: string, offset: number, length: number): string {
  const chars = characters(text);
  let start = offset < 0 ? chars.length + offset : offset;
  start = Math.max(0, Math.min(start, chars.length));
  const end = length < 0 ? chars.length : Math.min(chars.length, start + length);
  return chars.slice(start, end).join("");
}

/** Go's strings.Trim: every character of `cutset` removed from both ends. */
function trimCutset(text: string, cutset: string): string {
  const cut = new Set(characters(cutset));
  const chars = characters(text);
  let start = 0;
  let end = chars.length;
  while (start < end && cut.has(chars[start]!)) start++;
  while (end > start && cut.has(chars[end - 1]!)) end--;
  return chars.slice(start, end).join("");
}

export const stringFunctions: FunctionTable = {
  chomp: arity(1, 1, (args) => str(args, 0).replace(/(?:\r\n|\n|\r)+$/, "")),
  format: arity(1, Infinity, (args) => format(str(args, 0), args.slice(1))),
  formatlist: arity(1, Infinity, (args) => {
    const spec = str(args, 0);
    const rest = args.slice(1);
    const lengths = rest.filter(Array.isArray).map((list) => list.length);
    if (lengths.some((n) => n !== lengths[0])) throw new HclEvalError("all list arguments must have the same length");
    const count = lengths[0] ?? 1;
    return Array.from({ length: count }, (_, i) => format(spec, rest.map((value) => (Array.isArray(value) ? value[i]! : value))));
  }),
  indent: arity(2, 2, (args) => {
    const pad = " ".repeat(asNumber(arg(args, 0)));
    return str(args, 1).replace(/\n/g, `\n${pad}`);
  }),
  join: arity(2, Infinity, (args) => {
    const separator = str(args, 0);
    return args
      .slice(1)
      .flatMap((list) => asList(list))
      .map((item) => asString(item))
      .join(separator);
  }),
  lower: arity(1, 1, (args) => str(args, 0).toLowerCase()),
  upper: arity(1, 1, (args) => str(args, 0).toUpperCase()),
  regex_replace: arity(3, 3, (args) => str(args, 0).replace(goRegExp(str(args, 1), "gu"), str(args, 2).replace(/\$\{?(\w+)\}?/g, "$<$1>").replace(/\$<(\d+)>/g, "$$$1"))),
  replace: arity(3, 3, (args) => str(args, 0).split(str(args, 1)).join(str(args, 2))),
  split: arity(2, 2, (args) => {
    const text = str(args, 1);
    return text === "" ? [""] : text.split(str(args, 0));
  }),
  strlen: arity(1, 1, (args) => characters(str(args, 0)).length),
  strrev: arity(1, 1, (args) => characters(str(args, 0)).reverse().join("")),
  substr: arity(3, 3, (args) => substr(str(args, 0), asNumber(arg(args, 1)), asNumber(arg(args, 2)))),
  title: arity(1, 1, (args) => str(args, 0).replace(/(^|[^\p{L}\p{N}'])(\p{L})/gu, (_, before: string, letter: string) => before + letter.toUpperCase())),
  trim: arity(2, 2, (args) => trimCutset(str(args, 0), str(args, 1))),
  trimprefix: arity(2, 2, (args) => {
    const [text, prefix] = [str(args, 0), str(args, 1)];
    return text.startsWith(prefix) ? text.slice(prefix.length) : text;
  }),
  trimsuffix: arity(2, 2, (args) => {
    const [text, suffix] = [str(args, 0), str(args, 1)];
    return suffix !== "" && text.endsWith(suffix) ? text.slice(0, -suffix.length) : text;
  }),
  trimspace: arity(1, 1, (args) => str(args, 0).trim()),
};
