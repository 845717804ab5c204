/**
 * The client RPCs a Nomad server forwards to the node that holds an alloc
 * (nomad/client_rpc.go: the server opens a stream on the node's own
 * connection), answered by this agent's own HTTP API, so a listing or a
 * restart asked of the server reaches the same code as one asked of the
 * node directly:
 *
 *   FileSystem.List {AllocID, Path}             GET  /v1/client/fs/ls/:id?path=       -> {Files}
 *   FileSystem.Stat {AllocID, Path}             GET  /v1/client/fs/stat/:id?path=     -> {Info}
 *   Allocations.Stats {AllocID, Task}           GET  /v1/client/allocation/:id/stats  -> {Stats}
 *   Allocations.Restart {AllocID, TaskName}     POST /v1/client/allocation/:id/restart
 *   Allocations.Signal {AllocID, Task, Signal}  POST /v1/client/allocation/:id/signal
 *   ClientStats.Stats                           GET  /v1/client/stats                 -> {HostStats}
 *
 * JSON field names are already Go's; only time values (a file's ModTime)
 * need Go's binary form. An error answers with the API's error text.
 */
import type { RpcHandler } from "./wire/net-rpc.ts";
import { goStrings, isoToGoTime } from "./go-values.ts";

export type LocalHttp = (request: Request) => Promise<Response>;

const LOCAL = "http://local";

interface Route {
  request(args: Record<string, unknown>): Request;
  reply(body: unknown): unknown;
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function fileInfo(info: unknown): unknown {
  if (typeof info !== "object" || info === null) return info;
  const fields = info as Record<string, unknown>;
  return { ...fields, ModTime: isoToGoTime(typeof fields.ModTime === "string" ? fields.ModTime : null) };
}

const get = (path: string, query: Record<string, string> = {}) => new Request(`${LOCAL}${path}?${new URLSearchParams(query)}`);
const post = (path: string, body: unknown) =>
  new Request(`${LOCAL}${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
const alloc = (args: Record<string, unknown>) => encodeURIComponent(text(args.AllocID));

const ROUTES: Record<string, Route> = {
  "FileSystem.List": {
    request: (args) => get(`/v1/client/fs/ls/${alloc(args)}`, { path: text(args.Path) || "/" }),
    reply: (body) => ({ Files: Array.isArray(body) ? body.map(fileInfo) : [] }),
  },
  "FileSystem.Stat": {
    request: (args) => get(`/v1/client/fs/stat/${alloc(args)}`, { path: text(args.Path) || "/" }),
    reply: (body) => ({ Info: fileInfo(body) }),
  },
  "Allocations.Stats": {
    request: (args) => get(`/v1/client/allocation/${alloc(args)}/stats`, args.Task ? { task: text(args.Task) } : {}),
    reply: (body) => ({ Stats: body }),
  },
  "Allocations.Restart": {
    request: (args) => post(`/v1/client/allocation/${alloc(args)}/restart`, { TaskName: text(args.TaskName) }),
    reply: () => ({}),
  },
  "Allocations.Signal": {
    request: (args) => post(`/v1/client/allocation/${alloc(args)}/signal`, { Task: text(args.Task), Signal: text(args.Signal) }),
    reply: () => ({}),
  },
  "ClientStats.Stats": {
    request: () => get("/v1/client/stats"),
    reply: (body) => ({ HostStats: body }),
  },
};

export function clientRpcs(http: LocalHttp): RpcHandler {
  return async (method, rawArgs) => {
    const route = ROUTES[method];
    if (!route) throw new Error(`rpc: can't find method ${method}`);
    const args = (goStrings(rawArgs) ?? {}) as Record<string, unknown>;
    const response = await http(route.request(args));
    // The API answers an error as its plain-text message (app.ts), which the server passes on to its caller.
    if (!response.ok) throw new Error((await response.text()).trim() || `HTTP ${response.status}`);
    return route.reply(await response.json());
  };
}
