/**
 * The samples of a Bun CPU profile (--cpu-prof's JSON) that fall in a window,
 * counted per function: by itself (self) and anywhere on the stack
 * (inclusive, once per sample). bench/scale.ts with DROVER_BENCH_PROFILE
 * writes both the profile and the start's window; comparing two N's counts
 * shows which functions grow faster than the tasks.
 *
 *   bun bench/profile-window.ts PROFILE.cpuprofile WINDOW.json [TOP]
 *
 * Bun's --cpu-prof-md summary covers the whole run (start-up and the idle
 * minutes after included); this keeps only the window's samples. A profile's
 * startTime and the window are both wall-clock (µs and ms since the epoch).
 */
import { readFileSync } from "node:fs";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const DEFAULT_TOP = 40;
const US_PER_MS = 1000;

const [profilePath, windowPath, topArg] = process.argv.slice(2);
if (!profilePath || !windowPath) {
  console.error("usage: bun bench/profile-window.ts PROFILE.cpuprofile WINDOW.json [TOP]");
  process.exit(2);
}
const top = topArg ? Number(topArg) : DEFAULT_TOP;
const profile = JSON.parse(readFileSync(profilePath, "utf8")) as Profile;
const window = JSON.parse(readFileSync(windowPath, "utf8")) as { postMs: number; runningMs: number };

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const label = ({ callFrame: { functionName, url, lineNumber } }: ProfileNode) => `${functionName || "(anonymous)"} ${url.split("/").pop() ?? ""}:${lineNumber}`;

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const bump = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
let at = profile.startTime;
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i] ?? 0;
  if (at < window.postMs * US_PER_MS || at > window.runningMs * US_PER_MS) continue;
  total++;
  const leaf = byId.get(profile.samples[i]!)!;
  bump(self, label(leaf));
  const seen = new Set<string>();
  for (let id: number | undefined = leaf.id; id !== undefined; id = parentOf.get(id)) {
    const name = label(byId.get(id)!);
    if (!seen.has(name)) bump(inclusive, name), seen.add(name);
  }
}

const print = (title: string, counts: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [name, count] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`${String(count).padStart(6)} ${((count / total) * 100).toFixed(1).padStart(5)} %  ${name}`);
  }
};
console.log(`${total} samples in the window (${((window.runningMs - window.postMs) / 1000).toFixed(2)} s)`);
print("self", self);
print("inclusive", inclusive);
