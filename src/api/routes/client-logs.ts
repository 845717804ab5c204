/**
 * GET /v1/client/fs/logs/:alloc_id?task=&type=stdout|stderr&origin=start|end&offset=&plain=&follow=
 *
 * Nomad's query and answers: `task` and `type` are required, `origin`
 * defaults to start, `plain` and `follow` take Go's boolean spellings. An
 * alloc unknown here, a task the alloc does not have, a task not started yet
 * and a stream without log files are 404s; malformed parameters are 400s.
 */
import type { Hono } from "hono";
import * as v from "valibot";
import { ApiError, parseQuery } from "../errors.ts";
import { GoBool } from "../../structs/common.ts";
import { LOG_TYPES, type LogType } from "../../log-layout/layout.ts";
import { LogsNotFoundError, streamLogs } from "../../client/fs/logs.ts";

/** A task's life as far as its logs care. */
export type TaskLogState = "pending" | "running" | "dead";

export interface FsLogsRouteDeps {
  /** The alloc's log dir (<alloc dir>/alloc/logs) on this node; null when the alloc is not here. */
  resolveLogDir(allocId: string): string | null | Promise<string | null>;
  /** The task's state in the alloc; null when the alloc has no such task. */
  taskState(allocId: string, task: string): TaskLogState | null | Promise<TaskLogState | null>;
}

const isLogType = (text: string): text is LogType => (LOG_TYPES as readonly string[]).includes(text);

const LogsQuery = v.object({
  task: v.pipe(v.optional(v.string(), ""), v.minLength(1, "must provide task name")),
  type: v.pipe(v.optional(v.string(), ""), v.check(isLogType, "must provide log type (stdout/stderr)"), v.transform((text) => text as LogType)),
  origin: v.optional(v.picklist(["start", "end"], "origin must be start or end"), "start"),
  offset: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,15}$/, "must be a non-negative integer"), v.transform(Number)),
    "0",
  ),
  plain: v.optional(GoBool, "false"),
  follow: v.optional(GoBool, "false"),
});

export function fsLogsRoutes(deps: FsLogsRouteDeps) {
  return (app: Hono) => {
    app.get("/v1/client/fs/logs/:alloc_id", async (c) => {
      const allocId = c.req.param("alloc_id");
      const query = parseQuery(LogsQuery, c.req.query(), ["task", "type", "origin"]);
      const logDir = await deps.resolveLogDir(allocId);
      if (logDir === null) throw new ApiError(404, `unknown allocation "${allocId}"`);
      const state = await deps.taskState(allocId, query.task);
      if (state === null) throw new ApiError(404, `unknown task name "${query.task}"`);
      if (state === "pending") throw new ApiError(404, `task "${query.task}" not started yet. No logs available`);

      let body: ReadableStream<Uint8Array>;
      try {
        body = streamLogs({
          logDir,
          task: query.task,
          type: query.type,
          origin: query.origin,
          offset: query.offset,
          plain: query.plain,
          follow: query.follow,
          isTaskDead: async () => (await deps.taskState(allocId, query.task)) !== "running",
          signal: c.req.raw.signal,
        });
      } catch (err) {
        if (err instanceof LogsNotFoundError) throw new ApiError(404, err.message);
        throw err;
      }
      return c.body(body, 200, { "Content-Type": query.plain ? "text/plain; charset=utf-8" : "application/json" });
    });
  };
}
