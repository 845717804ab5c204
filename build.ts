/**
 * Builds the single drover executable.
 *
 *   bun build.ts                      dist/drover for this machine, and dist/drover-linux-x64
 *                                     (here) as a symlink to it
 *   bun build.ts --target linux-arm64 dist/drover-linux-arm64 (needs Bun's arm64 runtime:
 *                                     downloaded by Bun, or --executable-path to a local copy)
 *   bun build.ts --all                every release target, named dist/drover-<os>-<arch>
 *
 * Bytecode and ESM make start-up fast (plain --bytecode defaults to CJS,
 * which rejects top-level await). The version and git commit are compiled in;
 * the database migrations are already code (src/state/client/migrations), and
 * the HCL parser's WASM module is an embedded file (src/lib/hcl-parser.ts), and so
 * is every file of the web UI (bundled first into dist/ui/, gzipped: see
 * src/runtime/ui-bundle.ts), so the binary needs nothing from the machine it was
 * built on. The UI's compressed size is printed against its budget.
 * dist/SHA256SUMS lists every binary for install.sh to verify.
 */
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import pkg from "./package.json" with { type: "json" };
import { embeddedName } from "./src/runtime/ui-bundle.ts";
import { bundleUi } from "./src/runtime/bun/ui-bundle.ts";
import { UI_BUDGET_BYTES } from "./src/lib/ui-budget.ts";
import { MOUNT_WORKER_ENTRY } from "./src/runtime/mount-thread.ts";

const TARGETS = ["linux-x64", "linux-arm64"] as const;
type Target = (typeof TARGETS)[number];

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: {
    target: { type: "string" },
    all: { type: "boolean", default: false },
    outdir: { type: "string", default: "dist" },
    "executable-path": { type: "string" },
  },
});

function gitCommit(): string {
  const result = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { stdout: "pipe", stderr: "ignore" });
  const commit = result.stdout.toString().trim();
  if (!result.success || !commit) return "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { stdout: "pipe" }).stdout.length > 0;
  return dirty ? `${commit}-dirty` : commit;
}

function hostTarget(): Target {
  const arch = process.arch === "arm64" ? "arm64" : "x64";
  return `linux-${arch}`;
}

/** The web UI's files, gzipped, under dist/ui/ by the names the binary embeds them by; their paths. */
async function buildUi(outdir: string): Promise<string[]> {
  const dir = join(outdir, "ui");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = await bundleUi();
  const total = files.reduce((sum, file) => sum + file.gzip.length, 0);
  const verdict = total <= UI_BUDGET_BYTES ? "within" : "OVER";
  console.log(`web UI: ${files.length} files, ${(total / 1024).toFixed(1)} KiB gzipped (${verdict} its ${UI_BUDGET_BYTES / 1000} KB budget)`);
  if (total > UI_BUDGET_BYTES) throw new Error("the web UI is over its size budget");
  return files.map((file) => {
    const path = join(dir, embeddedName(file));
    writeFileSync(path, file.gzip);
    return `./${path}`;
  });
}

async function build(target: Target, outfile: string, commit: string, ui: string[]): Promise<void> {
  const result = await Bun.build({
    // Files that are not code (the UI's .gz files) are embedded as they are (Bun.embeddedFiles).
    // The mount thread's script (runtime/mount-thread.ts) is a Worker's entry of its own.
    entrypoints: ["./src/main.ts", MOUNT_WORKER_ENTRY, ...ui],
    compile: {
      // The host's own runtime is used as is; another target's comes from Bun's
      // download cache or --executable-path.
      ...(target === hostTarget() && !values["executable-path"] ? {} : { target: `bun-${target}` as const }),
      ...(values["executable-path"] ? { executablePath: values["executable-path"] } : {}),
      outfile,
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    bytecode: true,
    format: "esm",
    // One chunk per role's code: a per-task executor then loads only its own modules, not
    // the top level of the whole agent (measured: 5.4 -> 3.8 MiB private memory per executor).
    splitting: true,
    minify: true,
    sourcemap: "none",
    // Embedded files keep their own names, so the UI finds its files by name (its names carry
    // their content hash already).
    naming: { asset: "[name].[ext]" },
    // @cdktf/hcl2json's Go runtime shim requires a "performance" module only where the
    // global is missing; Bun has the global. (Its WASM module is embedded as a file asset
    // by src/runtime/bun/embedded.ts's import.)
    external: ["performance"],
    define: {
      DROVER_BUILD_VERSION: JSON.stringify(pkg.version),
      DROVER_BUILD_COMMIT: JSON.stringify(commit),
    },
  });
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error(`build for ${target} failed`);
  }
  chmodSync(outfile, 0o755);
}

/** Every release name (drover-<os>-<arch>) in `outdir`, a symlink's target read through. */
function writeChecksums(outdir: string): void {
  const lines = readdirSync(outdir)
    .filter((name) => name.startsWith("drover-"))
    .sort()
    .map((name) => `${createHash("sha256").update(readFileSync(join(outdir, name))).digest("hex")}  ${name}`);
  writeFileSync(join(outdir, "SHA256SUMS"), `${lines.join("\n")}\n`);
}

const outdir = values.outdir;
mkdirSync(outdir, { recursive: true });
const commit = gitCommit();
const ui = await buildUi(outdir);
const host = hostTarget();
const requested: Target[] = values.all ? [...TARGETS] : [(values.target as Target | undefined) ?? host];
for (const target of requested) {
  if (!TARGETS.includes(target)) throw new Error(`unknown target "${target}" (expected ${TARGETS.join(" or ")})`);
  // The host's binary is dist/drover, with its release name (for install.sh) as a symlink:
  // one 100 MiB file, not two.
  const release = `drover-${target}`;
  const file = target === host && !values.all ? "drover" : release;
  const started = performance.now();
  // A new file, not the old one rewritten: a running drover keeps its inode, and a
  // symlink left by an earlier build is not written through.
  rmSync(join(outdir, file), { force: true });
  await build(target, join(outdir, file), commit, ui);
  if (file !== release) {
    rmSync(join(outdir, release), { force: true });
    symlinkSync(file, join(outdir, release));
  }
  const names = file === release ? [file] : [file, `${release} -> ${file}`];
  console.log(`built ${names.map((name) => join(outdir, name)).join(", ")} (${target}, ${commit}) in ${Math.round(performance.now() - started)} ms`);
}
writeChecksums(outdir);
