/**
 * A client that goes away mid-request is the client's doing, not a bug of the
 * agent's: over a real listener, a POST whose body stops half-way and whose
 * connection then closes is logged once, at INFO, in one line that says so,
 * not at ERROR with the runtime's exception object.
 */
import { afterAll, expect, test } from "bun:test";
import { connect } from "node:net";
import pino from "pino";
import { PUBLIC } from "../../src/api/acl/route-rules.ts";
import { createApp } from "../../src/api/app.ts";
import { jsonBody } from "../../src/api/body.ts";
import { serveHttp } from "../../src/runtime/serve.ts";
import { waitFor } from "../helpers/index.ts";

interface Line {
  level: number;
  msg: string;
  [key: string]: unknown;
}

const lines: Line[] = [];
const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
let started = false;
const app = createApp(
  logger,
  [
    (a) =>
      a.post("/v1/echo", async (c) => {
        started = true;
        return c.json(await jsonBody(c));
      }),
  ],
  {
    routeRules: [{ methods: ["POST"], path: "/v1/echo", rule: PUBLIC }],
  },
);
const server = serveHttp((request) => app.fetch(request), "127.0.0.1", 0);
afterAll(() => server.stop(true));

test("a POST dropped mid-body is one INFO line naming the request", async () => {
  const socket = connect(server.port, "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  socket.write('POST /v1/echo HTTP/1.1\r\nHost: drover\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"half":');
  // The route has the request and waits for the rest of its body when the client goes.
  await waitFor("the route reading the body", () => started);
  socket.destroy();
  const line = await waitFor("the dropped request logged", () => lines.find((candidate) => candidate.path === "/v1/echo"));
  expect(line).toEqual({
    level: 30,
    time: expect.any(Number),
    pid: expect.any(Number),
    hostname: expect.any(String),
    method: "POST",
    path: "/v1/echo",
    reason: expect.any(String),
    msg: "the client closed the connection before the request was read",
  });
  expect(lines.filter((candidate) => candidate.level >= 40)).toEqual([]);
});
