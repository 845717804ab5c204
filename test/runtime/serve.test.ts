/**
 * runtime/serve.ts under each runtime: the same Hono app answers HTTP and
 * echoes over a websocket whether Bun.serve or Deno.serve runs it, and stops
 * on request. A request line the runtime's parser cannot read never reaches
 * the app: each runtime answers it itself (docs/http-api.md).
 */
import { describe, expect, test } from "bun:test";
import { connect } from "node:net";
import { join } from "node:path";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { waitFor } from "../helpers/index.ts";
import { DENO_DROVER } from "../helpers/runtimes.ts";

const APP = join(import.meta.dir, "fixtures", "serve-app.ts");
// deno run -A --config=<repo>/deno.jsonc, without drover's main script.
const DENO_RUN = DENO_DROVER.slice(0, -1);

/**
 * What each runtime's own parser answers to a NUL byte in the request target.
 * Bun.serve's parser (uWebSockets) ends the target at the first byte below
 * 0x21 and then finds no " HTTP/1.1", so it answers 505 before any of
 * drover's code runs and offers no hook (oven-sh/bun#19326). When a Bun
 * upgrade answers 400, this fails: update the table and docs/http-api.md.
 */
const NUL_REQUEST_LINE_STATUS: Readonly<Record<string, string>> = {
  bun: "HTTP/1.1 505 HTTP Version Not Supported",
  deno: "HTTP/1.1 400 Bad Request",
};

/** Sends `bytes` on a new connection and resolves with the first line of the answer, once the server closes it. */
function rawStatusLine(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(bytes));
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("end", () => resolve(answer.split("\r\n")[0]!));
    socket.on("error", reject);
  });
}

/** Starts the fixture app under `argv` and resolves with its process and port (killing it if it never prints one). */
async function startApp(argv: readonly string[]) {
  const server = spawnProcess({ argv, env: process.env, stdout: "pipe", stderr: "inherit" });
  try {
    const reader = server.stdout!.getReader();
    let out = "";
    const port = await waitFor("the port", async () => {
      const chunk = await reader.read();
      out += new TextDecoder().decode(chunk.value ?? new Uint8Array());
      return /^\d+\n/.test(out) ? Number(out.trim()) : null;
    });
    return { server, port };
  } catch (err) {
    server.kill("SIGKILL");
    throw err;
  }
}

describe.each([
  ["bun", [process.execPath, APP]],
  ["deno", [...DENO_RUN, APP]],
] as const)("serveHttp on %s", (runtime, argv) => {
  test("answers HTTP, echoes over a websocket, and stops", async () => {
    const { server, port } = await startApp(argv);
    try {
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

  test("a NUL byte in the request line is answered by the runtime, and the server goes on serving", async () => {
    const { server, port } = await startApp(argv);
    try {
      expect(await rawStatusLine(port, "GET /hello\0 HTTP/1.1\r\nHost: drover\r\n\r\n")).toBe(NUL_REQUEST_LINE_STATUS[runtime]!);
      expect(await (await fetch(`http://127.0.0.1:${port}/hello`)).text()).toBe(`hello from ${runtime}`);
    } finally {
      server.kill("SIGKILL");
    }
  });
});
