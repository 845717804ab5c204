/**
 * The UI's exec websocket client against a real websocket server: the
 * frames the agent would receive, in order.
 */
import { afterAll, expect, test } from "bun:test";
import { openExec } from "../../src/ui/api/exec-socket.ts";
import { waitFor } from "../helpers/index.ts";

const received: unknown[] = [];
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch: (request, srv) => (srv.upgrade(request) ? undefined : new Response("no", { status: 400 })),
  websocket: {
    message(_socket, message) {
      received.push(JSON.parse(String(message)));
    },
  },
});
afterAll(() => server.stop(true));

test("keystrokes typed before the socket opens reach the agent after the handshake, in order", async () => {
  const session = openExec(`ws://127.0.0.1:${server.port}/`, { columns: 80, rows: 24 }, { output() {}, exited() {}, closed() {} });
  // The constructor has only begun connecting: these are sent while it is CONNECTING.
  session.input("echo early\n");
  session.resize(100, 30);
  await waitFor("four frames", () => received.length >= 4);
  session.close();
  expect(received).toEqual([
    { version: 1 },
    { tty_size: { width: 80, height: 24 } },
    { stdin: { data: Buffer.from("echo early\n").toString("base64") } },
    { tty_size: { width: 100, height: 30 } },
  ]);
});
