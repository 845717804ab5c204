/**
 * Version constraints as Nomad's `version` and `semver` operators read them
 * (hashicorp/go-version and Nomad's own semver parser): a comma-separated
 * list of `<op> <version>` that must all hold, with op one of = != > < >= <=
 * and, for `version` only, the pessimistic ~>. npm's `semver` reads another
 * range syntax (spaces, ||, no ~>, no comma lists), so this is written here.
 *
 *   "1.2"      == "1.2.0"  (missing segments are zeros)
 *   "~> 1.2"   >= 1.2, < 2.0        "~> 1.2.3"  >= 1.2.3, < 1.3.0
 *   version:   a pre-release version only matches a constraint that names a
 *              pre-release of the same base version
 *   semver:    pre-releases compare by semver's order; no ~>
 */

export interface Version {
  segments: number[];
  /** How many segments were written (before padding to three): what ~> keeps fixed. */
  written: number;
  prerelease: string;
}

export type ConstraintFlavour = "version" | "semver";

interface Term {
  op: string;
  version: Version;
}

const VERSION_RE = /^v?(\d+(?:\.\d+)*)(?:-([0-9A-Za-z.~-]+)|([A-Za-z~][0-9A-Za-z.~-]*))?(?:\+[0-9A-Za-z.~-]+)?$/;
const TERM_RE = /^\s*(=|!=|>=|<=|>|<|~>)?\s*(\S+)\s*$/;

/** A version as go-version reads it (Nomad parses a node's side this way for both flavours). */
export function parseVersion(text: string): Version | undefined {
  const match = VERSION_RE.exec(text.trim());
  if (!match) return undefined;
  const written = match[1]!.split(".").map(Number);
  const segments = [...written];
  while (segments.length < 3) segments.push(0);
  return { segments, written: written.length, prerelease: match[2] ?? match[3] ?? "" };
}

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (a === "") return 1;
  if (b === "") return -1;
  const left = a.split(".");
  const right = b.split(".");
  for (let i = 0; i < Math.max(left.length, right.length); i++) {
    const x = left[i];
    const y = right[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) return Number(x) - Number(y);
    if (xn !== yn) return xn ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < Math.max(a.segments.length, b.segments.length); i++) {
    const diff = (a.segments[i] ?? 0) - (b.segments[i] ?? 0);
    if (diff !== 0) return Math.sign(diff);
  }
  return Math.sign(comparePrerelease(a.prerelease, b.prerelease));
}

const sameBase = (a: Version, b: Version) => a.segments.length === b.segments.length && a.segments.every((segment, i) => segment === b.segments[i]);

/** The constraint's terms, or an error message naming the part that does not parse. */
export function parseConstraint(text: string, flavour: ConstraintFlavour): Term[] | string {
  const terms: Term[] = [];
  for (const part of text.split(",")) {
    const match = TERM_RE.exec(part);
    const op = match?.[1] ?? "=";
    const version = match ? parseVersion(match[2]!) : undefined;
    if (!match || !version || (flavour === "semver" && op === "~>")) return `malformed constraint: ${part.trim() || text}`;
    terms.push({ op, version });
  }
  return terms;
}

function holds(term: Term, version: Version, flavour: ConstraintFlavour): boolean {
  const want = term.version;
  if (flavour === "version") {
    // go-version's pre-release rule (see the file comment).
    if (version.prerelease !== "" && (want.prerelease === "" || !sameBase(want, version))) return false;
  }
  const cmp = compareVersions(version, want);
  switch (term.op) {
    case "=":
      return cmp === 0;
    case "!=":
      return cmp !== 0;
    case ">":
      return cmp > 0;
    case "<":
      return cmp < 0;
    case ">=":
      return cmp >= 0;
    case "<=":
      return cmp <= 0;
    case "~>": {
      if (want.prerelease !== "" && version.prerelease === "") return false;
      if (cmp < 0) return false;
      const fixed = Math.max(1, want.written - 1);
      return want.segments.slice(0, fixed).every((segment, i) => version.segments[i] === segment);
    }
    default:
      return false;
  }
}

/** Whether `versionText` satisfies `constraintText`; false when either does not parse (as Nomad's feasibility check). */
export function versionMatches(versionText: string, constraintText: string, flavour: ConstraintFlavour): boolean {
  const version = parseVersion(versionText);
  const terms = parseConstraint(constraintText, flavour);
  if (!version || typeof terms === "string") return false;
  return terms.every((term) => holds(term, version, flavour));
}
