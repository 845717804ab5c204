/**
 * The layering of src/ as ARCHITECTURE.md's "Layers" table states it: each
 * folder may import only the folders its row names. The table is the rule, so
 * the document and the code cannot drift apart; a folder missing from the
 * table fails too.
 *
 * And the runtime boundary: only src/runtime/ touches a runtime's own APIs
 * (Bun's or Deno's modules and globals). Inside it, bun/ and deno/ hold each
 * runtime's half, never reach into each other, and provide the same modules;
 * the shared files reach them only through the "@drover/runtime/" name that
 * tsconfig.json (Bun) and deno.jsonc (Deno) map to one half each.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const SRC = join(ROOT, "src");

const ARCHITECTURE = "ARCHITECTURE.md";
const LAYERS_HEADING = "\n## Layers\n";

/** The "Layers" section of ARCHITECTURE.md: from its heading to the next of its level. */
function layersSection(): string {
  const text = readFileSync(join(ROOT, ARCHITECTURE), "utf8");
  const start = text.indexOf(LAYERS_HEADING);
  if (start < 0) throw new Error(`${ARCHITECTURE} has no "## Layers" section`);
  const end = text.indexOf("\n## ", start + LAYERS_HEADING.length);
  return text.slice(start, end < 0 ? undefined : end);
}

/** `| \`src/x/\` | owns | a, b |` rows of the Layers table: folder -> what it may import. */
function readRules(): Map<string, Set<string>> {
  const section = layersSection();
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

/** The code of a file without its comments (string contents are kept, which is fine for these checks). */
function codeOf(file: string): string {
  return readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

/** Modules that are one runtime's own, or that stand for a runtime capability (SQLite, serving adapters). */
const RUNTIME_MODULE = /^(bun$|bun:|deno$|npm:|jsr:|node:sqlite$|hono\/(bun|deno)$|drizzle-orm\/bun-sqlite|@drover\/runtime\/)/;
const GLOBAL = (name: string) => new RegExp(`(?<![\\w.$])(${name}\\s*[.[]|globalThis\\s*(\\.|\\[\\s*["'])${name}\\b)`);
const BUN_GLOBAL = GLOBAL("Bun");
/** An import attribute other than JSON (`with { type: "file" }`: Bun's bundler embeds the file; Deno refuses it). */
const BUN_IMPORT_ATTRIBUTE = /\bwith\s*\{\s*type\s*:\s*["'](?!json["'])/;
const DENO_GLOBAL = GLOBAL("Deno");

/** An import or re-export statement: whether it is type-only, and what it names. */
const STATEMENT = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^;"'`]*?)\s*(?:from\s*)?["']([^"']+)["']/g;

/**
 * The modules a file needs at run time: every import and re-export but the
 * type-only ones (`import type`, or braces naming only `type` members),
 * which vanish when the file is compiled and so cannot close a cycle.
 */
function valueImportsOf(file: string): string[] {
  const specs: string[] = [];
  for (const match of codeOf(file).matchAll(STATEMENT)) {
    const [, keyword, typeKeyword, clause, spec] = match;
    if (typeKeyword !== undefined) continue;
    if (keyword === "export" && !clause!.startsWith("{") && !clause!.startsWith("*")) continue;
    const braces = /^\{([^}]*)\}$/.exec(clause!.trim());
    if (braces && braces[1]!.split(",").map((name) => name.trim()).filter(Boolean).every((name) => name.startsWith("type "))) continue;
    specs.push(spec!);
  }
  return specs;
}

/** Where a relative or `@drover/runtime/` import lands: a file under src/, both halves for the latter. */
function resolveImport(file: string, spec: string): string[] {
  if (spec.startsWith("@drover/runtime/")) {
    const module = spec.slice("@drover/runtime/".length);
    return ["bun", "deno"].map((half) => join(SRC, "runtime", half, module));
  }
  return spec.startsWith(".") ? [normalize(join(dirname(file), spec))] : [];
}

/** Strongly connected groups of more than one file (Tarjan's algorithm) in a file -> imports graph. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) groups.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return groups;
}

/** "bun" for src/runtime/bun/..., "deno" for src/runtime/deno/..., "shared" for the rest of src/runtime/. */
function runtimeHalf(file: string): "bun" | "deno" | "shared" {
  const rel = relative(join(SRC, "runtime"), file);
  return rel.startsWith("bun/") ? "bun" : rel.startsWith("deno/") ? "deno" : "shared";
}

describe("layering", () => {
  const rules = readRules();
  const files = sourceFiles(SRC);

  test("ARCHITECTURE.md's Layers table names every folder under src/, and nothing else", () => {
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

  test("only src/runtime/ imports a runtime's own modules or uses Bun's or Deno's globals", () => {
    const violations = files
      .filter((file) => layerOf(file) !== "runtime")
      .flatMap((file) => [
        ...importsOf(file)
          .filter((spec) => RUNTIME_MODULE.test(spec))
          .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
        ...[BUN_GLOBAL, DENO_GLOBAL, BUN_IMPORT_ATTRIBUTE].filter((pattern) => pattern.test(codeOf(file))).map((pattern) => `${relative(ROOT, file)} uses ${pattern.source}`),
      ]);
    expect(violations).toEqual([]);
  });

  test("inside src/runtime/, Bun's half and Deno's half stay apart and the shared files use neither directly", () => {
    const violations: string[] = [];
    for (const file of files.filter((f) => layerOf(f) === "runtime")) {
      const half = runtimeHalf(file);
      const code = codeOf(file);
      const name = relative(ROOT, file);
      const specs = importsOf(file);
      if (half !== "bun" && (BUN_GLOBAL.test(code) || BUN_IMPORT_ATTRIBUTE.test(code) || specs.some((spec) => /^(bun$|bun:|hono\/bun$|drizzle-orm\/bun-sqlite$)/.test(spec)))) {
        violations.push(`${name} uses Bun's own API outside runtime/bun/`);
      }
      if (half !== "deno" && (DENO_GLOBAL.test(code) || specs.some((spec) => /^(deno$|npm:|jsr:|hono\/deno$)/.test(spec)))) {
        violations.push(`${name} uses Deno's own API outside runtime/deno/`);
      }
      for (const spec of specs.filter((s) => s.startsWith("."))) {
        const target = normalize(join(dirname(file), spec));
        if (layerOf(target) !== "runtime") continue;
        const to = runtimeHalf(target);
        if (to !== "shared" && to !== half) violations.push(`${name} imports ${spec} (the ${to} half); shared code goes through @drover/runtime/`);
      }
      if (half !== "shared" && specs.some((spec) => spec.startsWith("@drover/runtime/"))) violations.push(`${name} imports @drover/runtime/ from inside a half`);
    }
    expect(violations).toEqual([]);
  });

  test("every module the shared runtime files ask of a half exists in both halves", () => {
    const asked = new Set(
      files
        .filter((file) => layerOf(file) === "runtime" && runtimeHalf(file) === "shared")
        .flatMap((file) => importsOf(file).filter((spec) => spec.startsWith("@drover/runtime/")))
        .map((spec) => spec.slice("@drover/runtime/".length)),
    );
    const missing = [...asked].flatMap((module) =>
      ["bun", "deno"].filter((half) => !files.includes(join(SRC, "runtime", half, module))).map((half) => `src/runtime/${half}/${module}`),
    );
    expect(asked.size).toBeGreaterThan(0);
    expect(missing).toEqual([]);
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

  test("no import cycle between files carries a value (a top-level use in such a cycle fails at load)", () => {
    const known = new Set(files);
    const graph = new Map(
      files.map((file) => [file, valueImportsOf(file).flatMap((spec) => resolveImport(file, spec)).filter((target) => known.has(target))] as const),
    );
    expect(graph.get(join(SRC, "runtime", "serve.ts"))?.length).toBeGreaterThan(0);
    expect(cyclesOf(graph).map((group) => group.map((file) => relative(ROOT, file)).join(" <-> "))).toEqual([]);
  });
});
