/** "Did you mean ...?" for a mistyped command or subcommand: the closest known name within a couple of edits. */

/** Edits beyond this are a different word, not a typo. */
const MAX_TYPO_DISTANCE = 2;

function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** ` Did you mean "x"?` when one name is close (shown after `prefix`, e.g. "-" for flags), else "". */
export function suggestion(given: string, names: readonly string[], prefix = ""): string {
  let best: string | undefined;
  let bestDistance = MAX_TYPO_DISTANCE + 1;
  for (const name of names) {
    const d = distance(given, name);
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best === undefined ? "" : ` Did you mean "${prefix}${best}"?`;
}
