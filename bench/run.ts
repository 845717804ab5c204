/**
 * Runs the bench/ scripts: all of them, or those named.
 *
 *   npm run bench                 every script
 *   npm run bench -- startup      bench/startup.ts only
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

const here = import.meta.dir;
const all = readdirSync(here)
  .filter((name) => name.endsWith(".ts") && name !== "run.ts" && name !== "lib.ts")
  .map((name) => name.slice(0, -3))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !all.includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")} (have: ${all.join(", ")})`);
  process.exit(1);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  console.log(`\n=== bench/${name}.ts ===`);
  const result = Bun.spawnSync([process.execPath, join(here, `${name}.ts`)], { stdout: "inherit", stderr: "inherit" });
  if (result.exitCode !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
