/**
 * The server's job endpoints (Nomad's /v1/jobs and /v1/job/:id):
 *
 *   GET  /v1/jobs[?prefix=]          list stubs with summaries        (blocking)
 *   POST /v1/jobs                    register {"Job": {...}}
 *   POST /v1/jobs/parse              {"JobHCL": "..."} -> Job JSON
 *   GET  /v1/job/:id                 the job                          (blocking)
 *   POST /v1/job/:id                 register (update) the job
 *   DELETE /v1/job/:id[?purge=true]  stop, or purge
 *   GET  /v1/job/:id/allocations     its allocs                       (blocking)
 *   GET  /v1/job/:id/evaluations     its evaluations                  (blocking)
 *   GET  /v1/job/:id/summary         counts per group                 (blocking)
 *   GET  /v1/job/:id/versions        kept versions, newest first      (blocking)
 */
import type { Hono } from "hono";
import * as v from "valibot";
import { parseOrThrow } from "../../lib/validation.ts";
import type { JobEndpoint } from "../../server/endpoints/job.ts";
import { JobRegisterRequestSchema, JobsParseRequestSchema } from "../../structs/api.ts";
import { GoBool } from "../../structs/common.ts";
import { jsonBody } from "../body.ts";
import { badRequest } from "../errors.ts";
import { blockingQuery, serverCall, type IndexedTables } from "./server-query.ts";


export function jobsRoutes(jobs: JobEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    const register = async (body: unknown, pathId?: string) => {
      const request = parseOrThrow(JobRegisterRequestSchema, body, "request body");
      const job = request.Job as { ID?: unknown } | null;
      if (pathId !== undefined && (typeof job !== "object" || job === null || job.ID !== pathId)) {
        throw badRequest(`Job.ID must match the job in the path ("${pathId}")`);
      }
      return serverCall(() => jobs.register(request.Job, { enforceIndex: request.EnforceIndex, jobModifyIndex: request.JobModifyIndex }));
    };

    app.get("/v1/jobs", (c) => blockingQuery(c, tables, ["jobs", "allocs"], () => jobs.list(c.req.query("prefix"))));
    app.on(["POST", "PUT"], "/v1/jobs", async (c) => c.json(await register(await jsonBody(c))));

    app.on(["POST", "PUT"], "/v1/jobs/parse", async (c) => {
      const request = parseOrThrow(JobsParseRequestSchema, await jsonBody(c), "request body");
      // Loaded on first use: the HCL parser's WASM start costs ~140 ms the agent need not pay at boot.
      const { parseJobHcl } = await import("../../jobspec/index.ts");
      // Nomad's parse endpoint only parses: what registering needs is checked on register.
      return c.json(await parseJobHcl("JobHCL", request.JobHCL, { validate: false }));
    });

    app.get("/v1/job/:id", (c) => blockingQuery(c, tables, ["jobs"], () => jobs.get(c.req.param("id"))));
    app.on(["POST", "PUT"], "/v1/job/:id", async (c) => c.json(await register(await jsonBody(c), c.req.param("id"))));
    app.delete("/v1/job/:id", (c) => {
      const purge = parseOrThrow(v.optional(GoBool, "false"), c.req.query("purge"), "purge");
      return c.json(serverCall(() => jobs.deregister(c.req.param("id"), purge)));
    });

    app.get("/v1/job/:id/allocations", (c) => blockingQuery(c, tables, ["allocs"], () => jobs.allocations(c.req.param("id"))));
    app.get("/v1/job/:id/evaluations", (c) => blockingQuery(c, tables, ["evals"], () => jobs.evaluations(c.req.param("id"))));
    app.get("/v1/job/:id/summary", (c) => blockingQuery(c, tables, ["jobs", "allocs"], () => jobs.summary(c.req.param("id"))));
    app.get("/v1/job/:id/versions", (c) =>
      blockingQuery(c, tables, ["jobs"], () => ({ Versions: jobs.versions(c.req.param("id")), Diffs: null })),
    );
  };
}

