/**
 * The client's alloc endpoints (Nomad's /v1/client/...): what only the node
 * that runs an alloc can answer or do.
 *
 *   GET  /v1/client/allocation/:id/stats     AllocResourceUsage
 *   GET  /v1/client/allocation/:id/checks    {<check ID>: AllocCheckStatus}: the latest result of each service check (Nomad 1.4+)
 *   PUT  /v1/client/allocation/:id/restart   {TaskName, AllTasks}  (PUT or POST, as Nomad)
 *   PUT  /v1/client/allocation/:id/signal    {Signal, Task}        (PUT or POST)
 *   GET|PUT /v1/client/allocation/:id/gc     collect the finished alloc's dir now
 *   GET|PUT /v1/client/gc                    collect every finished alloc's dir now
 *   POST /v1/client/allocation/:id/exec      {Task, Cmd, TimeoutMs} -> {Stdout, Stderr, ExitCode}
 *   GET  /v1/client/fs/logs/:id              the task's logs (see client-logs.ts)
 *   GET  /v1/client/fs/{ls,stat,cat,readat,stream}/:id   the alloc dir (see client-fs.ts)
 */
import type { Hono } from "hono";
import { AllocStillRunningError, TaskChoiceError, UnknownAllocError, type Client } from "../../client/client.ts";
import { clientFsRoutes } from "./client-fs.ts";
import { fsLogsRoutes } from "./client-logs.ts";
import { TaskNotRunningError } from "../../client/taskrunner/task-runner.ts";
import { AllocExecRequestSchema, AllocRestartRequestSchema, AllocSignalRequestSchema, type AllocExecResponse } from "../../structs/api.ts";
import { parseOrThrow } from "../../lib/validation.ts";
import { PERMISSION_DENIED } from "../../acl/resolver.ts";
import { callerOf } from "../acl/caller.ts";
import { mayExecInto } from "../acl/node-exec.ts";
import type { Routes } from "../app.ts";
import { jsonBody } from "../body.ts";
import { ApiError, notFound } from "../errors.ts";
import { WRITE } from "../acl/route-rules.ts";

/** The client's "not here" is a 404, a missing task choice a 400, a task that is not running a 409. */
async function act<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof UnknownAllocError) throw new ApiError(404, err.message);
    if (err instanceof TaskChoiceError || err instanceof AllocStillRunningError) throw new ApiError(400, err.message);
    if (err instanceof TaskNotRunningError) throw new ApiError(409, err.message);
    throw err;
  }
}

export function clientAllocRoutes(client: Client): Routes[] {
  const runner = (id: string) => {
    const found = client.allocRunner(id);
    if (!found) throw notFound(`allocation "${id}" on this node`);
    return found;
  };
  return [
    (app: Hono) => {
      app.get("/v1/client/allocation/:id/stats", async (c) => c.json(await client.allocStats(runner(c.req.param("id")).id)));
      app.get("/v1/client/allocation/:id/checks", (c) => c.json(runner(c.req.param("id")).checkResults()));
      app.on(WRITE, "/v1/client/allocation/:id/restart", async (c) => {
        const request = parseOrThrow(AllocRestartRequestSchema, await jsonBody(c, {}), "restart request");
        const id = c.req.param("id");
        await act(() => client.restartAlloc(id, request.AllTasks ? "" : request.TaskName));
        return c.json({});
      });
      app.on(WRITE, "/v1/client/allocation/:id/signal", async (c) => {
        const request = parseOrThrow(AllocSignalRequestSchema, await jsonBody(c, {}), "signal request");
        const id = c.req.param("id");
        await act(() => client.signalAlloc(id, request.Task, request.Signal));
        return c.json({});
      });
      // Nomad's Go client sends these as GETs; its CLI docs say PUT.
      app.on(["GET", ...WRITE], "/v1/client/allocation/:id/gc", async (c) => {
        await act(() => client.collectAlloc(c.req.param("id")));
        return c.json({});
      });
      app.on(["GET", ...WRITE], "/v1/client/gc", async (c) => {
        await client.collectAllAllocs();
        return c.json({});
      });
      app.post("/v1/client/allocation/:id/exec", async (c) => {
        const request = parseOrThrow(AllocExecRequestSchema, await jsonBody(c, {}), "exec request");
        const id = c.req.param("id");
        const target = await act(async () => client.execTarget(id, request.Task));
        if (!mayExecInto(callerOf(c), target)) throw new ApiError(403, PERMISSION_DENIED);
        const result = await act(() => client.execInAlloc(id, request.Task, request.Cmd, request.TimeoutMs));
        const response: AllocExecResponse = { Stdout: result.stdout, Stderr: result.stderr, ExitCode: result.exitCode };
        return c.json(response);
      });
    },
    clientFsRoutes((id) => client.allocRunner(id)?.allocDir.path ?? null),
    fsLogsRoutes({
      resolveLogDir: (id) => client.allocRunner(id)?.allocDir.logs ?? null,
      taskState: (id, task) => client.allocRunner(id)?.task(task)?.state.State ?? null,
    }),
  ];
}
