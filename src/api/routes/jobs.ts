/**
 * The server's job endpoints (Nomad's /v1/jobs, /v1/job/:id and
 * /v1/validate/job). Writes take PUT and POST, as Nomad's do.
 *
 *   GET  /v1/jobs[?prefix=]              list stubs with summaries            (blocking)
 *   PUT  /v1/jobs                        register {"Job": {...}}
 *   PUT  /v1/jobs/parse                  {"JobHCL": "..."} -> Job JSON
 *   PUT  /v1/validate/job                {"Job": {...}} -> its problems
 *   GET  /v1/job/:id                     the job                              (blocking)
 *   PUT  /v1/job/:id                     register (update) the job
 *   DELETE /v1/job/:id[?purge=true]      stop, or purge
 *   GET  /v1/job/:id/allocations[?all=]  its allocs                           (blocking)
 *   GET  /v1/job/:id/evaluations         its evaluations                      (blocking)
 *   GET  /v1/job/:id/summary             counts per group                     (blocking)
 *   GET  /v1/job/:id/versions[?diffs=]   kept versions, newest first          (blocking)
 *   GET  /v1/job/:id/deployment[s]       its (latest) deployment(s)           (blocking)
 *   PUT  /v1/job/:id/plan                what registering it would do
 *   PUT  /v1/job/:id/revert              {JobVersion, EnforcePriorVersion}
 *   PUT  /v1/job/:id/evaluate            schedule it again
 *   GET|PUT /v1/job/:id/scale            group counts and scaling events; {Count, Target: {Group}, Message}
 *   PUT  /v1/job/:id/periodic/force      launch a periodic job's child now
 *   PUT  /v1/job/:id/dispatch            {Payload, Meta}: a parameterized job's child
 *   PUT  /v1/job/:id/stable              {JobVersion, Stable}
 */
import type { Context, Hono } from "hono";
import * as v from "valibot";
import { parseOrThrow, ValidationError } from "../../lib/validation.ts";
import type { DeploymentEndpoint } from "../../server/endpoints/deployment.ts";
import type { JobEndpoint } from "../../server/endpoints/job.ts";
import {
  JobPlanRequestSchema,
  JobRegisterRequestSchema,
  JobRevertRequestSchema,
  JobsParseRequestSchema,
  JobStabilityRequestSchema,
  JobValidateRequestSchema,
  ScalingRequestSchema,
} from "../../structs/api.ts";
import { JobDispatchRequestSchema } from "../../server/children/dispatch.ts";
import { GoBool } from "../../structs/common.ts";
import { jsonBody } from "../body.ts";
import { badRequest } from "../errors.ts";
import { blockingQuery, serverCall, type IndexedTables } from "./server-query.ts";
import { WRITE } from "../acl/route-rules.ts";

/** A Go boolean query parameter (?purge=, ?all=, ?diffs=), false when absent. */
const boolQuery = (c: Context, name: string): boolean => parseOrThrow(v.optional(GoBool, "false"), c.req.query(name), name);

/** Nomad's check that a body's job is the one in the path. */
function jobInPath(job: unknown, pathId: string): void {
  const id = (job as { ID?: unknown } | null)?.ID;
  if (typeof job !== "object" || job === null || id !== pathId) throw badRequest(`Job.ID must match the job in the path ("${pathId}")`);
}

export function jobsRoutes(jobs: JobEndpoint, deployments: DeploymentEndpoint, tables: IndexedTables) {
  return (app: Hono) => {
    const register = async (body: unknown, pathId?: string) => {
      const request = parseOrThrow(JobRegisterRequestSchema, body, "request body");
      if (pathId !== undefined) jobInPath(request.Job, pathId);
      return serverCall(() => jobs.register(request.Job, { enforceIndex: request.EnforceIndex, jobModifyIndex: request.JobModifyIndex }));
    };

    app.get("/v1/jobs", (c) => blockingQuery(c, tables, ["jobs", "allocs"], () => jobs.list(c.req.query("prefix"))));
    app.on(WRITE, "/v1/jobs", async (c) => c.json(await register(await jsonBody(c))));

    app.on(WRITE, "/v1/jobs/parse", async (c) => {
      const request = parseOrThrow(JobsParseRequestSchema, await jsonBody(c), "request body");
      // Loaded on first use: the HCL parser's WASM start costs ~140 ms the agent need not pay at boot.
      const { parseJobHcl, jobVariableFiles } = await import("../../jobspec/index.ts");
      if (request.HCLv1 && request.Variables !== "") throw new ValidationError("request body", ["Variables: HCL1 job files have no variables (HCLv1 is true)"]);
      // As Nomad's endpoint: no file functions, and names the job does not declare are ignored.
      const files = request.Variables === "" ? [] : await jobVariableFiles([{ name: "Variables", text: request.Variables }]);
      // Nomad's parse endpoint only parses: what registering needs is checked on register.
      return c.json(await parseJobHcl("JobHCL", request.JobHCL, { validate: false, variables: { files, ignoreUndeclared: true }, hcl1: request.HCLv1 }));
    });

    app.on(WRITE, "/v1/validate/job", async (c) => {
      const request = parseOrThrow(JobValidateRequestSchema, await jsonBody(c), "request body");
      if (request.Job === undefined || request.Job === null) throw badRequest("Job must be specified");
      return c.json(serverCall(() => jobs.validate(request.Job)));
    });

    app.get("/v1/job/:id", (c) => blockingQuery(c, tables, ["jobs"], () => jobs.get(c.req.param("id"))));
    app.on(WRITE, "/v1/job/:id", async (c) => c.json(await register(await jsonBody(c), c.req.param("id"))));
    app.delete("/v1/job/:id", (c) => c.json(serverCall(() => jobs.deregister(c.req.param("id"), boolQuery(c, "purge")))));

    app.get("/v1/job/:id/allocations", (c) =>
      blockingQuery(c, tables, ["allocs"], () => jobs.allocations(c.req.param("id"), boolQuery(c, "all"))),
    );
    app.get("/v1/job/:id/evaluations", (c) => blockingQuery(c, tables, ["evals"], () => jobs.evaluations(c.req.param("id"))));
    app.get("/v1/job/:id/summary", (c) => blockingQuery(c, tables, ["jobs", "allocs"], () => jobs.summary(c.req.param("id"))));
    app.get("/v1/job/:id/versions", (c) =>
      blockingQuery(c, tables, ["jobs"], () => jobs.versionsWithDiffs(c.req.param("id"), boolQuery(c, "diffs"))),
    );
    app.get("/v1/job/:id/deployments", (c) =>
      blockingQuery(c, tables, ["deployments"], () => deployments.ofJob(c.req.param("id"), boolQuery(c, "all"))),
    );
    app.get("/v1/job/:id/deployment", (c) => blockingQuery(c, tables, ["deployments"], () => deployments.latestOfJob(c.req.param("id"))));

    app.on(WRITE, "/v1/job/:id/plan", async (c) => {
      const request = parseOrThrow(JobPlanRequestSchema, await jsonBody(c), "request body");
      jobInPath(request.Job, c.req.param("id"));
      return c.json(serverCall(() => jobs.plan(request.Job, request.Diff)));
    });
    app.on(WRITE, "/v1/job/:id/revert", async (c) => {
      const request = parseOrThrow(JobRevertRequestSchema, await jsonBody(c), "request body");
      return c.json(serverCall(() => jobs.revert(c.req.param("id"), request.JobVersion, request.EnforcePriorVersion)));
    });
    app.on(WRITE, "/v1/job/:id/evaluate", (c) => c.json(serverCall(() => jobs.forceEvaluate(c.req.param("id")))));
    app.get("/v1/job/:id/scale", (c) => blockingQuery(c, tables, ["jobs", "allocs"], () => jobs.scaleStatus(c.req.param("id"))));
    app.on(WRITE, "/v1/job/:id/scale", async (c) => {
      const request = parseOrThrow(ScalingRequestSchema, await jsonBody(c), "scaling request");
      return c.json(serverCall(() => jobs.scale(c.req.param("id"), request)));
    });
    app.on(WRITE, "/v1/job/:id/periodic/force", (c) => c.json(serverCall(() => jobs.periodicForce(c.req.param("id")))));
    app.on(WRITE, "/v1/job/:id/dispatch", async (c) => {
      const request = parseOrThrow(JobDispatchRequestSchema, await jsonBody(c, {}), "dispatch request");
      return c.json(serverCall(() => jobs.dispatch(c.req.param("id"), request)));
    });
    app.on(WRITE, "/v1/job/:id/stable", async (c) => {
      const request = parseOrThrow(JobStabilityRequestSchema, await jsonBody(c), "request body");
      return c.json(serverCall(() => jobs.setStable(c.req.param("id"), request.JobVersion, request.Stable)));
    });
  };
}
