/**
 * Nomad's constraint operators (scheduler/feasible.go checkConstraint) over
 * resolved targets. distinct_hosts and distinct_property depend on other
 * allocations, not on the node alone, and are judged in distinct.ts.
 */
import { versionMatches } from "../../../lib/version-constraint.ts";
import type { Resolved } from "./targets.ts";

export const DISTINCT_HOSTS = "distinct_hosts";
export const DISTINCT_PROPERTY = "distinct_property";

/** Regular expressions compiled once per pattern (Nomad keeps the same cache per evaluation). */
const regexCache = new Map<string, RegExp | null>();
/** A bound on the cache, so job files cannot grow it without end. */
const REGEX_CACHE_MAX = 512;

function compiled(pattern: string): RegExp | null {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = new RegExp(pattern);
    } catch {
      re = null;
    }
    if (regexCache.size >= REGEX_CACHE_MAX) regexCache.clear();
    regexCache.set(pattern, re);
  }
  return re;
}

const setOf = (text: string) => new Set(text.split(",").map((item) => item.trim()));
const items = (text: string) => text.split(",").map((item) => item.trim());

/** Whether the node-side value `l` and the job-side value `r` satisfy `operand`. */
export function checkOperand(operand: string, l: Resolved, r: Resolved): boolean {
  if (operand === DISTINCT_HOSTS || operand === DISTINCT_PROPERTY) return true;
  const both = l.found && r.found;
  const lv = l.value ?? "";
  const rv = r.value ?? "";
  switch (operand) {
    case "=":
    case "==":
    case "is":
      return both && lv === rv;
    case "!=":
    case "not":
      return l.found !== r.found || lv !== rv;
    case "<":
      return both && lv < rv;
    case "<=":
      return both && lv <= rv;
    case ">":
      return both && lv > rv;
    case ">=":
      return both && lv >= rv;
    case "is_set":
      return l.found;
    case "is_not_set":
      return !l.found;
    case "version":
    case "semver":
      return both && versionMatches(lv, rv, operand);
    case "regexp":
      return both && (compiled(rv)?.test(lv) ?? false);
    case "set_contains":
    case "set_contains_all": {
      if (!both) return false;
      const have = setOf(lv);
      return items(rv).every((item) => have.has(item));
    }
    case "set_contains_any": {
      if (!both) return false;
      const have = setOf(lv);
      return items(rv).some((item) => have.has(item));
    }
    default:
      return false;
  }
}
