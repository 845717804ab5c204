/**
 * The web UI's files (src/ui/, built for the browser by Bun's bundler), each
 * gzipped once, as the HTTP API serves them.
 *
 *   build.ts ──> bundleUi() (bun/ui-bundle.ts) ──> dist/ui/ui~<name>.gz ──> embedded in the executable
 *   compiled agent (Bun) ──> uiBundle() reads the embedded ui~*.gz files (no disk, no bundler)
 *   agent from source, Bun ──> uiBundle() bundles src/ui/ on first use, kept for the process's life
 *   agent on Deno ──> uiBundle() reads dist/ui/ as `npm run build` left it (Deno has no bundler)
 */
export interface UiFile {
  /** The name under /ui/: "index.html", "index-1a2b3c4d.js", ... */
  name: string;
  gzip: Uint8Array;
}

/** What marks an embedded file as the UI's: the compiled binary embeds other files too (the HCL parser's WASM). */
export const EMBEDDED_UI_PREFIX = "ui~";
export const EMBEDDED_UI_SUFFIX = ".gz";

/** The URL prefix every built file is referred to by, so index.html works at any /ui/ path. */
export const UI_PUBLIC_PATH = "/ui/";

/** The name a UI file is embedded under (build.ts writes files by these names). */
export function embeddedName(file: UiFile): string {
  return `${EMBEDDED_UI_PREFIX}${file.name}${EMBEDDED_UI_SUFFIX}`;
}

/** The UI file an embedded name holds, or undefined for another embedded file. */
export function uiNameOf(embedded: string): string | undefined {
  if (!embedded.startsWith(EMBEDDED_UI_PREFIX) || !embedded.endsWith(EMBEDDED_UI_SUFFIX)) return undefined;
  return embedded.slice(EMBEDDED_UI_PREFIX.length, -EMBEDDED_UI_SUFFIX.length);
}

