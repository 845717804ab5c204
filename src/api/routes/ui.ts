/**
 * The web UI, served from the files compiled into the binary:
 *
 *   GET /                  307 to /ui/
 *   GET /ui                307 to /ui/
 *   GET /ui/<file>         a built file (hashed name: cached for good)
 *   GET /ui/<any path>     index.html, so a page's URL (/ui/jobs/web) can be shared and reloaded
 *
 * The UI is one more client of the public API: it reads nothing here but
 * its own files, and these need no token (a page without one asks for it).
 * Files are kept gzipped and sent so; a client that does not take gzip gets
 * them inflated.
 */
import type { Hono } from "hono";
import { gunzipSync } from "node:zlib";
import type { UiFile } from "../../runtime/ui-bundle.ts";

/** Hashed names never change content, so a browser may keep them as long as it likes. */
const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * The page may load only its own files and talk only to this agent (its
 * websockets included); xterm.js and uPlot set styles from script, which
 * needs inline styles.
 */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const CONTENT_TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
  json: "application/json",
};

function contentType(name: string): string {
  return CONTENT_TYPES[name.slice(name.lastIndexOf(".") + 1)] ?? "application/octet-stream";
}

/** A last path segment with an extension names a file, which is a 404 when missing, never the page. */
const LOOKS_LIKE_FILE = /\.[a-z0-9]+$/i;

export function uiRoutes(files: () => Promise<UiFile[]>) {
  let byName: Promise<Map<string, UiFile>> | undefined;
  const lookup = () => {
    byName ??= files().then((list) => new Map(list.map((file) => [file.name, file])));
    byName.catch(() => (byName = undefined));
    return byName;
  };

  return (app: Hono) => {
    app.get("/", (c) => c.redirect("/ui/", 307));
    app.get("/ui", (c) => c.redirect("/ui/", 307));
    app.get("/ui/*", async (c) => {
      const rest = c.req.path.slice("/ui/".length);
      let map: Map<string, UiFile>;
      try {
        map = await lookup();
      } catch (err) {
        // The UI's files are missing (an agent on Deno before `npm run build`): say so; the API itself is fine.
        return c.text(`the web UI is unavailable: ${(err as Error).message}`, 503);
      }
      const asset = map.get(rest);
      const file = asset ?? (LOOKS_LIKE_FILE.test(rest) ? undefined : map.get("index.html"));
      if (!file) return c.text(`no such file: ${c.req.path}`, 404);
      const gzip = (c.req.header("accept-encoding") ?? "").includes("gzip");
      const headers: Record<string, string> = {
        "content-type": contentType(file.name),
        "cache-control": file.name === "index.html" ? "no-cache" : IMMUTABLE,
        vary: "accept-encoding",
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
      };
      if (file.name === "index.html") {
        headers["content-security-policy"] = CONTENT_SECURITY_POLICY;
        headers["x-frame-options"] = "DENY";
      }
      if (gzip) headers["content-encoding"] = "gzip";
      const body = gzip ? file.gzip : gunzipSync(file.gzip);
      return c.body(new Uint8Array(body), 200, headers);
    });
  };
}
