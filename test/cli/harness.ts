/**
 * A real HTTP agent for CLI tests: the server's routes on a free 127.0.0.1
 * port, plus stand-ins for the client's routes (logs, restart, signal) that
 * record what they were sent. `simulateClient` plays the client: it watches
 * the node's allocs and reports them as the test wants.
 */
import { afterAll } from "bun:test";
import { Hono } from "hono";
import pino from "pino";
import { namespace, ROUTE_RULES } from "../../src/api/acl/route-rules.ts";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import type { Io } from "../../src/cli/command.ts";
import { serveHttp, type ServeTls } from "../../src/runtime/serve.ts";
import { clientEndpoint } from "../../src/server/client-endpoint.ts";
import type { Allocation, ClientStatus } from "../../src/structs/alloc.ts";
import { freePort } from "../helpers/index.ts";
import { openTestServer, testNode } from "../server/fixtures.ts";

export interface CapturedIo extends Io {
  readonly out: string;
  readonly err: string;
}

export function captureIo(env: Record<string, string | undefined> = {}): CapturedIo {
  let out = "";
  let err = "";
  const decoder = new TextDecoder();
  return {
    print: (line) => void (out += `${line}\n`),
    write: (chunk) => void (out += typeof chunk === "string" ? chunk : decoder.decode(chunk)),
    error: (line) => void (err += `${line}\n`),
    env,
    get out() {
      return out;
    },
    get err() {
      return err;
    },
  };
}

export interface RecordedCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

/** What the fake log endpoint serves: per "<alloc>/<task>/<type>", the text, and text sent later when following. */
export const LOGS = new Map<string, { text: string; later?: string }>();

function clientRoutes(calls: RecordedCall[]) {
  return (app: Hono) => {
    app.get("/v1/client/fs/logs/:alloc", (c) => {
      const query = c.req.query();
      calls.push({ method: "GET", path: c.req.path, query, body: undefined });
      const log = LOGS.get(`${c.req.param("alloc")}/${query.task}/${query.type}`) ?? { text: "" };
      const tail = query.origin === "end" ? log.text.slice(Math.max(0, log.text.length - Number(query.offset))) : log.text;
      if (query.follow !== "true" || log.later === undefined) return c.text(tail);
      const encoder = new TextEncoder();
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(encoder.encode(tail));
          setTimeout(() => {
            controller.enqueue(encoder.encode(log.later!));
            controller.close();
          }, 500);
        },
      });
      return new Response(stream);
    });
    app.post("/v1/client/allocation/:alloc/:action", async (c) => {
      calls.push({ method: "POST", path: c.req.path, query: c.req.query(), body: await c.req.json() });
      return c.json({});
    });
  };
}

/** `acl`: ACLs enabled; `tls`: the API served over TLS. */
export async function startTestAgent(options: { acl?: boolean; tls?: ServeTls } = {}) {
  const { server } = openTestServer();
  const node = testNode({ Name: "test-node", HostVolumes: { shared: { Name: "shared", Path: "/srv/shared", ReadOnly: false }, certs: { Name: "certs", Path: "/etc/ssl/certs", ReadOnly: true } } });
  server.nodes.upsert(node);
  const calls: RecordedCall[] = [];
  const app = createApp(pino({ level: "silent" }), [...serverRoutes(server, options.acl), clientRoutes(calls)], {
    ...(options.acl ? { acl: { resolver: server.acl } } : {}),
    routeRules: [
      ...ROUTE_RULES,
      { methods: ["GET"], path: "/v1/client/fs/logs/:alloc", rule: namespace("read-logs") },
      { methods: ["POST"], path: "/v1/client/allocation/:alloc/:action", rule: namespace("alloc-lifecycle") },
    ],
  });
  const http = serveHttp((request, connection, server) => app.fetch(request, { connection, server }), "127.0.0.1", await freePort(), options.tls);
  const address = `${options.tls ? "https" : "http"}://127.0.0.1:${http.port}`;
  const stop = async () => {
    await http.stop(true);
    server.close();
  };
  afterAll(stop);
  return { server, node, address, calls, endpoint: clientEndpoint(server) };
}

/**
 * Plays the client until aborted: every alloc told to run gets
 * `status(alloc)` (with a task state), every alloc told to stop completes.
 */
export function simulateClient(agent: Awaited<ReturnType<typeof startTestAgent>>, status: (alloc: Allocation) => ClientStatus = () => "running"): AbortController {
  const controller = new AbortController();
  void (async () => {
    let index = 0;
    while (!controller.signal.aborted) {
      const result = await agent.endpoint.watchAllocs(agent.node.ID, index, controller.signal).catch(() => undefined);
      if (!result) return;
      index = result.index;
      const updates = result.allocs
        .filter((alloc) => alloc.ClientStatus === "pending" || (alloc.DesiredStatus !== "run" && alloc.ClientStatus === "running"))
        .map((alloc) => {
          const clientStatus = alloc.DesiredStatus === "run" ? status(alloc) : "complete";
          const now = new Date().toISOString();
          return {
            ID: alloc.ID,
            ClientStatus: clientStatus,
            ClientDescription: clientStatus === "running" ? "Tasks are running" : clientStatus === "failed" ? "Failed tasks" : "All tasks have completed",
            TaskStates: {
              srv: {
                State: clientStatus === "running" ? ("running" as const) : ("dead" as const),
                Failed: clientStatus === "failed",
                Restarts: 0,
                LastRestart: null,
                StartedAt: now,
                FinishedAt: clientStatus === "running" ? null : now,
                Events: [
                  { Type: "Received", Time: Date.now() * 1e6, Message: "", DisplayMessage: "Task received by client", Details: {} },
                  { Type: "Started", Time: Date.now() * 1e6, Message: "", DisplayMessage: "Task started by client", Details: {} },
                ],
              },
            },
          };
        });
      if (updates.length > 0) await agent.endpoint.updateAllocs(updates);
    }
  })();
  return controller;
}
