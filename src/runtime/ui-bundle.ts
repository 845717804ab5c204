/**
 * The web UI's files (src/ui/, built for the browser by Bun's bundler), each
 * gzipped once, as the HTTP API serves them.
 *
 *   build.ts ──> bundleUi() ──> dist/ui/ui~<name>.gz ──> embedded in the executable
 *   compiled agent ──> uiBundle() reads the embedded ui~*.gz files (no disk, no bundler)
 *   agent from source ──> uiBundle() bundles src/ui/ on first use, kept for the process's life
 *
 * Bun's bundler and its embedded-file list are Bun's own APIs, so they live
 * here; the route only sees names and bytes.
 */
import { isCompiled } from "./detect.ts";
import { gzipSync } from "node:zlib";

export interface UiFile {
  /** The name under /ui/: "index.html", "index-1a2b3c4d.js", ... */
  name: string;
  gzip: Uint8Array;
}

/** What marks an embedded file as the UI's: the compiled binary embeds other files too (the HCL parser's WASM). */
export const EMBEDDED_UI_PREFIX = "ui~";
const GZ = ".gz";

/** The URL prefix every built file is referred to by, so index.html works at any /ui/ path. */
export const UI_PUBLIC_PATH = "/ui/";

const ENTRY = new URL("../ui/index.html", import.meta.url).pathname;

/**
 * Bundles src/ui/ for the browser: minified, split so that what only some
 * pages need (the terminal) loads when they open, hashed names so a browser
 * may keep any file but index.html for good.
 */
export async function bundleUi(): Promise<UiFile[]> {
  const result = await Bun.build({
    entrypoints: [ENTRY],
    target: "browser",
    format: "esm",
    minify: true,
    splitting: true,
    sourcemap: "none",
    publicPath: UI_PUBLIC_PATH,
    naming: { entry: "[name]-[hash].[ext]", chunk: "[name]-[hash].[ext]", asset: "[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
  });
  if (!result.success) throw new AggregateError(result.logs, "bundling the web UI failed");
  return Promise.all(
    result.outputs.map(async (output) => {
      const base = output.path.slice(output.path.lastIndexOf("/") + 1);
      // The HTML entry keeps its plain name: it is what every /ui/ path answers with.
      const name = output.kind === "entry-point" && base.endsWith(".html") ? "index.html" : base;
      return { name, gzip: gzipSync(new Uint8Array(await output.arrayBuffer()), { level: 9 }) };
    }),
  );
}

/** The name a UI file is embedded under (build.ts writes files by these names). */
export function embeddedName(file: UiFile): string {
  return `${EMBEDDED_UI_PREFIX}${file.name}${GZ}`;
}

let bundled: Promise<UiFile[]> | undefined;

/** The UI's files: the embedded ones in a compiled binary, else bundled from source once. */
export function uiBundle(): Promise<UiFile[]> {
  if (isCompiled) {
    bundled ??= Promise.all(
      Bun.embeddedFiles
        .map((blob) => ({ blob, name: (blob as Blob & { name?: string }).name ?? "" }))
        .filter(({ name }) => name.startsWith(EMBEDDED_UI_PREFIX) && name.endsWith(GZ))
        .map(async ({ blob, name }) => ({ name: name.slice(EMBEDDED_UI_PREFIX.length, -GZ.length), gzip: new Uint8Array(await blob.arrayBuffer()) })),
    );
  } else {
    bundled ??= bundleUi();
  }
  // A failed bundle is not kept: the next request tries again (a source file fixed meanwhile).
  bundled.catch(() => (bundled = undefined));
  return bundled;
}
