/**
 * The layering of src/ as the README's "Layers" table states it: each folder
 * may import only the folders its row names, and only src/runtime/ may
 * import Bun's own modules. The table is the rule, so README and code cannot
 * drift apart; a folder missing from the table fails too.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const SRC = join(ROOT, "src");

/** `| \`src/x/\` | owns | a, b |` rows of the Layers table: folder -> what it may import. */
function readRules(): Map<string, Set<string>> {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("### Layers"));
  const rules = new Map<string, Set<string>>();
  for (const line of section.split("\n")) {
    const match = /^\| `src\/([\w.-]+?)\/?` \|[^|]*\| ([^|]*) \|$/.exec(line);
    if (!match) continue;
    const allowed = match[2]!.trim() === "—" ? [] : match[2]!.split(",").map((name) => name.trim());
    rules.set(layerName(match[1]!), new Set(allowed));
  }
  return rules;
}

/** "main.ts" -> "main"; folders keep their name. */
function layerName(entry: string): string {
  return entry.replace(/\.ts$/, "");
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** The layer a path under src/ belongs to, or undefined for a path outside src/. */
function layerOf(path: string): string | undefined {
  const rel = relative(SRC, path);
  if (rel.startsWith("..")) return undefined;
  return layerName(rel.split("/")[0]!);
}

const IMPORT = /(?:^|[^\w.])(?:import|export)\s*(?:type\s+)?(?:[^"'();]*?\sfrom\s*)?\(?\s*["']([^"']+)["']/g;

function importsOf(file: string): string[] {
  return [...readFileSync(file, "utf8").matchAll(IMPORT)].map((match) => match[1]!);
}

describe("layering", () => {
  const rules = readRules();
  const files = sourceFiles(SRC);

  test("the README's table names every folder under src/, and nothing else", () => {
    const layers = new Set(readdirSync(SRC).map(layerName));
    expect([...rules.keys()].sort()).toEqual([...layers].sort());
  });

  test("every import points to a layer its folder may use", () => {
    const violations: string[] = [];
    for (const file of files) {
      const from = layerOf(file)!;
      for (const spec of importsOf(file)) {
        if (!spec.startsWith(".")) continue;
        const to = layerOf(normalize(join(dirname(file), spec)));
        if (to === undefined || to === from || rules.get(from)?.has(to)) continue;
        violations.push(`${relative(ROOT, file)} imports ${spec} (${from} may import: ${[...(rules.get(from) ?? [])].join(", ") || "nothing"})`);
      }
    }
    expect(violations).toEqual([]);
  });

  test("only src/runtime/ imports Bun's own modules", () => {
    const violations = files
      .filter((file) => layerOf(file) !== "runtime")
      .filter((file) => importsOf(file).some((spec) => spec === "bun" || spec.startsWith("bun:")))
      .map((file) => relative(ROOT, file));
    expect(violations).toEqual([]);
  });

  test("the rules themselves point one way: no two layers may import each other, directly or around a cycle", () => {
    const seen = new Set<string>();
    const onPath = new Set<string>();
    const cycles: string[] = [];
    const visit = (layer: string, path: string[]) => {
      if (onPath.has(layer)) {
        cycles.push([...path.slice(path.indexOf(layer)), layer].join(" -> "));
        return;
      }
      if (seen.has(layer)) return;
      seen.add(layer);
      onPath.add(layer);
      for (const next of rules.get(layer) ?? []) visit(next, [...path, layer]);
      onPath.delete(layer);
    };
    for (const layer of rules.keys()) visit(layer, []);
    expect(cycles).toEqual([]);
  });
});
