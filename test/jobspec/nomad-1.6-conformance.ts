/**
 * How many of Nomad 1.6's own job files drover parses. Run with a folder of
 * job files (e.g. Nomad's e2e/, demo/ and command/asset/ at v1.6.9):
 *
 *   bun test/jobspec/nomad-1.6-conformance.ts DIR [--list]
 *
 * Failures are split into those that need HCL2 evaluation (variables,
 * locals, functions, dynamic blocks: the evaluator's part) and the rest
 * (blocks and attributes the job schema lacks). --list prints each failing
 * file's first problems.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { parseJobHcl } from "../../src/jobspec/index.ts";
import { ValidationError } from "../../src/lib/validation.ts";

/** Problems that come from expressions HCL2 evaluation resolves, not from the schema. */
const NEEDS_EVALUATION = /\bvar\.|\blocal\.|\bvariables?\b|\blocals\b|"dynamic"|dynamic:|expression|template directives|Variables not allowed|Function calls not allowed|\$\{/;

function jobFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jobFiles(path);
    return /\.(nomad|hcl)$/.test(name) ? [path] : [];
  });
}

const [dir, ...flags] = process.argv.slice(2);
if (!dir) throw new Error("usage: bun test/jobspec/nomad-1.6-conformance.ts DIR [--list]");
const list = flags.includes("--list");
const files = jobFiles(dir).sort();
const counts = { parsed: 0, evaluation: 0, schema: 0 };
const problemCounts = new Map<string, number>();
for (const file of files) {
  const name = relative(dir, file);
  try {
    await parseJobHcl(name, readFileSync(file, "utf8"), { validate: false });
    counts.parsed++;
  } catch (err) {
    const problems = err instanceof ValidationError ? err.problems : [String(err)];
    const evaluation = problems.some((problem) => NEEDS_EVALUATION.test(problem));
    counts[evaluation ? "evaluation" : "schema"]++;
    if (!evaluation) for (const problem of problems) {
      const key = problem.replace(/\[".*?"\]/g, "[…]").replace(/^.*?: (?=job)/, "");
      problemCounts.set(key, (problemCounts.get(key) ?? 0) + 1);
    }
    if (list) console.log(`${evaluation ? "EVAL  " : "SCHEMA"} ${name}\n    ${problems.slice(0, 4).join("\n    ")}`);
  }
}
if (list) for (const [problem, n] of [...problemCounts].sort((a, b) => b[1] - a[1])) console.log(`${n}\t${problem}`);
console.log(`${files.length} files: ${counts.parsed} parse, ${counts.evaluation} need HCL2 evaluation, ${counts.schema} fail on blocks or attributes`);
