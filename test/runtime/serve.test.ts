/**
 * runtime/serve.ts under each runtime: the same Hono app answers HTTP and
 * echoes over a websocket whether Bun.serve or Deno.serve runs it, and stops
 * on request.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { waitFor } from "../helpers/index.ts";
import { DENO_DROVER } from "../helpers/runtimes.ts";

const APP = join(import.meta.dir, "fixtures", "serve-app.ts");
// deno run -A --config=<repo>/deno.jsonc, without drover's main script.
const DENO_RUN = DENO_DROVER.slice(0, -1);

describe.each([
  ["bun", [process.execPath, APP]],
  ["deno", [...DENO_RUN, APP]],
] as const)("serveHttp on %s", (runtime, argv) => {
  test("answers HTTP, echoes over a websocket, and stops", async () => {
    const server = spawnProcess({ argv, env: process.env, stdout: "pipe", stderr: "inherit" });
    try {
      const reader = server.stdout!.getReader();
      let out = "";
      const port = await waitFor("the port", async () => {
        const chunk = await reader.read();
        out += new TextDecoder().decode(chunk.value ?? new Uint8Array());
        return /^\d+\n/.test(out) ? Number(out.trim()) : null;
      });
      expect(await (await fetch(`http://127.0.0.1:${port}/hello`)).text()).toBe(`hello from ${runtime}`);

      const socket = new WebSocket(`ws://127.0.0.1:${port}/echo`);
      const reply = new Promise<string>((resolve, reject) => {
        socket.onmessage = (event) => resolve(String(event.data));
        socket.onerror = () => reject(new Error("websocket error"));
      });
      await new Promise((resolve) => (socket.onopen = resolve));
      socket.send("ping");
      expect(await reply).toBe("echo ping");
      socket.close();

      server.kill("SIGTERM");
      expect((await server.exited).exitCode).toBe(0);
    } finally {
      server.kill("SIGKILL");
    }
  });
});
