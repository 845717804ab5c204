/** runtime/ui-bundle.ts on Bun: its bundler makes the UI's files; a compiled binary carries them (Bun.embeddedFiles). */
import { gzipSync } from "node:zlib";
import { UI_PUBLIC_PATH, uiNameOf, type UiFile } from "../contract/ui-bundle.ts";
import { isCompiled } from "./detect.ts";

const ENTRY = new URL("../../ui/index.html", import.meta.url).pathname;

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

let bundled: Promise<UiFile[]> | undefined;

export function uiBundle(): Promise<UiFile[]> {
  bundled ??= isCompiled ? embedded() : bundleUi();
  // A failed bundle is not kept: the next request tries again (a source file fixed meanwhile).
  bundled.catch(() => (bundled = undefined));
  return bundled;
}

async function embedded(): Promise<UiFile[]> {
  const files: UiFile[] = [];
  for (const blob of Bun.embeddedFiles) {
    const name = uiNameOf((blob as Blob & { name?: string }).name ?? "");
    if (name !== undefined) files.push({ name, gzip: new Uint8Array(await blob.arrayBuffer()) });
  }
  return files;
}
