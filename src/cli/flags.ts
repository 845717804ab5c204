/**
 * Command-line flags the way Nomad (Go's flag package) takes them: one or two
 * dashes, `-name value` or `-name=value`, booleans without a value, repeatable
 * flags collected in order. yargs-parser does the parsing; this module pins
 * its configuration to that grammar and rejects flags a command did not
 * declare.
 */
import yargsParser from "yargs-parser";
import { suggestion } from "./suggest.ts";

export interface FlagSpec {
  booleans?: readonly string[];
  strings?: readonly string[];
  /** Flags that may be given more than once. */
  repeated?: readonly string[];
  /** Single-letter aliases, e.g. { n: "tail-lines" }. */
  aliases?: Readonly<Record<string, string>>;
  /**
   * Flags end at the first positional argument, as Go's flag package has
   * it: `alloc exec <id> sh -c x` gives "-c" to the command.
   */
  stopAtPositional?: boolean;
}

export interface ParsedFlags {
  booleans: Record<string, boolean>;
  strings: Record<string, string>;
  repeated: Record<string, string[]>;
  positionals: string[];
}

/** A usage error: the command prints it with its usage and exits 1. */
export class UsageError extends Error {
  override name = "UsageError";
}

export function parseFlags(argv: readonly string[], spec: FlagSpec): ParsedFlags {
  const booleans = spec.booleans ?? [];
  const strings = spec.strings ?? [];
  const repeated = spec.repeated ?? [];
  const aliases = spec.aliases ?? {};
  const parsed = yargsParser([...argv], {
    boolean: [...booleans],
    string: [...strings, ...repeated],
    array: [...repeated],
    alias: Object.fromEntries(Object.entries(aliases).map(([short, long]) => [long, [short]])),
    configuration: {
      "short-option-groups": false,
      "camel-case-expansion": false,
      "dot-notation": false,
      "parse-numbers": false,
      "parse-positional-numbers": false,
      "boolean-negation": false,
      "duplicate-arguments-array": true,
      "greedy-arrays": false,
      "strip-aliased": true,
      "populate--": true,
      "halt-at-non-option": spec.stopAtPositional ?? false,
    },
  });
  const known = new Set([...booleans, ...strings, ...repeated]);
  const out: ParsedFlags = { booleans: {}, strings: {}, repeated: {}, positionals: [] };
  for (const [key, value] of Object.entries(parsed)) {
    if (key === "_" || key === "--") continue;
    if (!known.has(key)) {
      const hint = suggestion(key, [...known], "-");
      throw new UsageError(`flag provided but not defined: -${key}${hint ? `.${hint}` : ""}`);
    }
    if (booleans.includes(key)) {
      if (Array.isArray(value)) throw new UsageError(`flag -${key} given more than once`);
      out.booleans[key] = value === true;
    } else if (repeated.includes(key)) {
      out.repeated[key] = (Array.isArray(value) ? value : [value]).map(String);
    } else {
      if (Array.isArray(value)) throw new UsageError(`flag -${key} given more than once`);
      if (value === "" || value === undefined) throw new UsageError(`flag needs an argument: -${key}`);
      out.strings[key] = String(value);
    }
  }
  out.positionals = [...parsed._.map(String), ...((parsed["--"] as string[] | undefined) ?? []).map(String)];
  return out;
}

/** True when the arguments ask for a command's usage (-h, -help, --help). */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.some((arg) => arg === "-h" || arg === "-help" || arg === "--help");
}
