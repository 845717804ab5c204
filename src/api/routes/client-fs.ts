/**
 * Nomad's /v1/client/fs endpoints over an alloc dir on this node
 * (src/client/fs/alloc-fs.ts keeps them inside it):
 *
 *   GET /v1/client/fs/ls/:alloc_id?path=               entries (AllocFileInfo[]); path defaults to /
 *   GET /v1/client/fs/stat/:alloc_id?path=             one AllocFileInfo, with ContentType
 *   GET /v1/client/fs/cat/:alloc_id?path=              the file's bytes
 *   GET /v1/client/fs/readat/:alloc_id?path=&offset=&limit=   a range of them (limit <= 0: to the end)
 *   GET /v1/client/fs/stream/:alloc_id?path=&offset=&origin=&follow=&plain=
 *                                                      StreamFrames (follow defaults to true)
 *
 * Nomad's messages: "must provide a file name" (400), unknown alloc (404),
 * a missing file (404; 400 from stream, as Nomad's),
 * a path outside the alloc dir (400), reading a task's secrets (403).
 */
import type { Context, Hono } from "hono";
import * as v from "valibot";
import { AllocFs, AllocFsError } from "../../client/fs/alloc-fs.ts";
import { parseOrThrow } from "../../lib/validation.ts";
import { GoBool } from "../../structs/common.ts";
import { ApiError, parseQuery } from "../errors.ts";

/** An int64 query parameter, as Go's strconv.ParseInt reads it. */
const Int64 = (name: string) =>
  v.pipe(v.string(), v.regex(/^-?\d{1,18}$/, `error parsing ${name}: must be an integer`), v.transform(Number));

const StreamQuery = v.object({
  offset: v.optional(Int64("offset"), "0"),
  origin: v.optional(v.picklist(["start", "end"], "origin must be start or end"), "start"),
  follow: v.optional(GoBool, "true"),
  plain: v.optional(GoBool, "false"),
});

export function clientFsRoutes(allocDir: (allocId: string) => string | null) {
  const fsOf = (c: Context) => {
    const id = c.req.param("alloc_id")!;
    const dir = allocDir(id);
    if (dir === null) throw new ApiError(404, `Unknown allocation "${id}"`);
    return new AllocFs(dir);
  };
  const requiredPath = (c: Context) => {
    const path = c.req.query("path");
    if (!path) throw new ApiError(400, "must provide a file name");
    return path;
  };
  /** AllocFsError keeps its status (a missing file's 404 becomes `missingStatus`); the rest propagates. */
  const fsCall = async <T>(call: () => Promise<T>, missingStatus: 400 | 404 = 404): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if (err instanceof AllocFsError) throw new ApiError(err.status === 404 ? missingStatus : err.status, err.message);
      throw err;
    }
  };
  const bytes = (c: Context, body: ReadableStream<Uint8Array>, framed: boolean) =>
    c.body(body, 200, { "Content-Type": framed ? "application/json" : "text/plain; charset=utf-8", "X-Content-Type-Options": "nosniff" });

  return (app: Hono) => {
    app.get("/v1/client/fs/ls/:alloc_id", async (c) => {
      const fs = fsOf(c);
      return c.json(await fsCall(() => fs.list(c.req.query("path") || "/")));
    });
    app.get("/v1/client/fs/stat/:alloc_id", async (c) => {
      const fs = fsOf(c);
      return c.json(await fsCall(() => fs.stat(requiredPath(c))));
    });
    app.get("/v1/client/fs/cat/:alloc_id", async (c) => {
      const fs = fsOf(c);
      const path = requiredPath(c);
      const body = await fsCall(() => fs.read(path, { offset: 0, origin: "start", limit: 0, plain: true, follow: false, signal: c.req.raw.signal }));
      return bytes(c, body, false);
    });
    app.get("/v1/client/fs/readat/:alloc_id", async (c) => {
      const fs = fsOf(c);
      const path = requiredPath(c);
      const offset = parseOrThrow(Int64("offset"), c.req.query("offset") ?? "", "offset");
      const limit = parseOrThrow(v.optional(Int64("limit"), "0"), c.req.query("limit"), "limit");
      if (offset < 0) throw new ApiError(400, "offset must not be negative");
      const body = await fsCall(() => fs.read(path, { offset, origin: "start", limit: Math.max(0, limit), plain: true, follow: false, signal: c.req.raw.signal }));
      return bytes(c, body, false);
    });
    app.get("/v1/client/fs/stream/:alloc_id", async (c) => {
      const fs = fsOf(c);
      const path = requiredPath(c);
      const { offset, origin, follow, plain } = parseQuery(StreamQuery, c.req.query(), ["origin"]);
      if (offset < 0) throw new ApiError(400, "offset must not be negative");
      // Nomad's stream answers a file it cannot stat with 400 (client/fs_endpoint.go), where stat and cat say 404.
      const body = await fsCall(() => fs.read(path, { offset, origin, limit: 0, plain, follow, signal: c.req.raw.signal }), 400);
      return bytes(c, body, !plain);
    });
  };
}
