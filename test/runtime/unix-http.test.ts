/**
 * runtime/serve.ts's serveHttpUnix under each runtime (Bun: one node:http
 * server behind every socket; Deno: a Deno.serve per socket): each request
 * reaches the handler with the tag of the socket it came through;
 * whole bodies with a Content-Length, a body still coming streamed as it
 * comes, the request's signal aborted when the client goes, and a closed
 * listener's socket gone with its open connections.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { request, type IncomingMessage } from "node:http";
import { join } from "node:path";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { DENO_DROVER } from "../helpers/runtimes.ts";

const APP = join(import.meta.dir, "fixtures", "unix-http-app.ts");
// deno run -A --config=<repo>/deno.jsonc, without drover's main script.
const DENO_RUN = DENO_DROVER.slice(0, -1);

interface Answer {
  status: number;
  headers: IncomingMessage["headers"];
  body: string;
}

function call(socketPath: string, path: string, method = "GET", body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, path, method }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe.each([
  ["bun", [process.execPath, APP]],
  ["deno", [...DENO_RUN, APP]],
] as const)("serveHttpUnix on %s", (_runtime, argv) => {
  test("answers each socket with its own tag, streams, sees the client go, and closes one socket", async () => {
    const dir = tempDir("drover-unix-http-");
    const app = spawnProcess({ argv: [...argv, dir], env: process.env, stdout: "pipe", stderr: "inherit" });
    const reader = app.stdout!.getReader();
    let out = "";
    const printed = (line: string) =>
      waitFor(line, async () => {
        while (!out.split("\n").includes(line)) {
          const chunk = await reader.read();
          if (chunk.done) return null;
          out += new TextDecoder().decode(chunk.value);
        }
        return true;
      });
    try {
      await printed("ready");
      expect(out).toContain("refused\n");
      const a = join(dir, "a.sock");
      const b = join(dir, "b.sock");

      const who = await call(a, "/who?x=1");
      expect(who.status).toBe(200);
      expect(JSON.parse(who.body)).toEqual({ tag: "a", socket: a, method: "GET", path: "/who", body: "" });
      expect(who.headers["x-tag"]).toBe("a");
      expect(who.headers["content-length"]).toBe(String(Buffer.byteLength(who.body)));
      expect(JSON.parse((await call(b, "/who", "PUT", "hello")).body)).toEqual({ tag: "b", socket: b, method: "PUT", path: "/who", body: "hello" });

      // The first chunk arrives while the body is still open; closing the connection aborts the request.
      const first = await new Promise<string>((resolve, reject) => {
        const req = request({ socketPath: b, path: "/stream" }, (res) => {
          res.once("data", (chunk: Buffer) => {
            resolve(`${res.headers["transfer-encoding"]} ${chunk.toString()}`);
            req.destroy();
          });
        });
        req.on("error", () => {});
        req.on("close", () => {});
        req.end();
        req.once("error", reject);
      });
      expect(first).toBe("chunked first\n");
      await printed("aborted b");

      expect((await call(a, "/close-b")).body).toBe("closed");
      expect(existsSync(b)).toBe(false);
      expect(existsSync(a)).toBe(true);
      expect(JSON.parse((await call(a, "/who")).body).tag).toBe("a");
    } finally {
      app.kill("SIGKILL");
      await app.exited;
    }
  });
});
