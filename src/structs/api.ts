/**
 * Request and response bodies of the server's endpoints, in Nomad's shapes.
 * The HTTP routes, the CLI and the in-process client endpoint share them.
 */
import * as v from "valibot";
import { isSignal } from "../lib/signals.ts";
import { NonNegativeInt } from "./common.ts";
import { AllocDeploymentStatusSchema, CLIENT_STATUSES } from "./alloc.ts";
import { TaskStateSchema } from "./task-state.ts";

/** POST /v1/jobs and POST /v1/job/:id. The job is checked by src/jobspec/api-job.ts. */
export const JobRegisterRequestSchema = v.object({
  Job: v.unknown(),
  /** With EnforceIndex, register only if the job's JobModifyIndex is still JobModifyIndex (0: the job must not exist). */
  EnforceIndex: v.optional(v.boolean(), false),
  JobModifyIndex: v.optional(NonNegativeInt, 0),
});
export type JobRegisterRequest = v.InferOutput<typeof JobRegisterRequestSchema>;

export interface JobRegisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
}

export interface JobDeregisterResponse {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Index: number;
}

/** POST /v1/allocation/:id/stop. */
export interface AllocStopResponse {
  EvalID: string;
  Index: number;
}

/** POST /v1/jobs/parse. */
export const JobsParseRequestSchema = v.object({
  JobHCL: v.string(),
  /** HCL2 variable values, as the text of a var file (HCL or JSON). */
  Variables: v.optional(v.string(), ""),
  Canonicalize: v.optional(v.boolean(), false),
  /** Nomad's HCL1 parser: drover reads the file as HCL2 syntax and evaluates nothing. */
  HCLv1: v.optional(v.boolean(), false),
});

/** What the client reports about one of its allocations. */
export const AllocClientUpdateSchema = v.object({
  ID: v.pipe(v.string(), v.minLength(1)),
  ClientStatus: v.picklist(CLIENT_STATUSES),
  ClientDescription: v.optional(v.string(), ""),
  TaskStates: v.optional(v.nullable(v.record(v.string(), TaskStateSchema)), null),
  DeploymentStatus: v.optional(v.nullable(AllocDeploymentStatusSchema), null),
  /** The deployment the reported health was judged for; a report for an earlier one is ignored. */
  DeploymentID: v.optional(v.string()),
});
export type AllocClientUpdate = v.InferInput<typeof AllocClientUpdateSchema>;

/** POST /v1/client/allocation/:id/restart (served by the client); no TaskName, or AllTasks, restarts every running task. */
export const AllocRestartRequestSchema = v.object({
  TaskName: v.optional(v.string(), ""),
  AllTasks: v.optional(v.boolean(), false),
});
export type AllocRestartRequest = v.InferOutput<typeof AllocRestartRequestSchema>;

/** POST /v1/client/allocation/:id/signal (served by the client); no Task (absent, "" or null, as Nomad's) signals every running task. */
export const AllocSignalRequestSchema = v.object({
  // Nomad's word for a name no signal has (its task drivers' "invalid signal: X").
  Signal: v.pipe(
    v.string(),
    v.check(isSignal, (issue) => `invalid signal: ${String(issue.input)}`),
  ),
  Task: v.pipe(
    v.optional(v.nullable(v.string()), ""),
    v.transform((task) => task ?? ""),
  ),
});
export type AllocSignalRequest = v.InferOutput<typeof AllocSignalRequestSchema>;

/** Longest an exec may run before it is killed, when the request names no timeout. */
export const DEFAULT_EXEC_TIMEOUT_MS = 5 * 60_000;

/**
 * POST /v1/client/allocation/:id/exec (served by the client): runs a command
 * in a running task's context (an exec task's namespaces and cgroup) and
 * answers with its output once it ends. Non-interactive: Nomad's is a
 * websocket session; this is the scripted subset.
 */
/** Linux refuses one argument over MAX_ARG_STRLEN (32 pages) with E2BIG; refused here, naming it. */
export const MAX_EXEC_ARG_BYTES = 128 * 1024;
/** Arguments of one exec; the whole argv also stays far under ARG_MAX. */
export const MAX_EXEC_ARGS = 1024;
export const ExecArgSchema = v.pipe(
  v.string(),
  v.check((arg) => !arg.includes("\0"), "an argument must not contain NUL"),
  v.check((arg) => Buffer.byteLength(arg) <= MAX_EXEC_ARG_BYTES, `an argument must be at most ${MAX_EXEC_ARG_BYTES} bytes`),
);

export const AllocExecRequestSchema = v.object({
  Task: v.optional(v.string(), ""),
  Cmd: v.pipe(v.array(ExecArgSchema), v.minLength(1, "must name a command"), v.maxLength(MAX_EXEC_ARGS, `must have at most ${MAX_EXEC_ARGS} arguments`)),
  TimeoutMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1)), DEFAULT_EXEC_TIMEOUT_MS),
});
export type AllocExecRequest = v.InferInput<typeof AllocExecRequestSchema>;

export interface AllocExecResponse {
  Stdout: string;
  Stderr: string;
  ExitCode: number;
}

/** PUT /v1/node/:id/drain (Nomad's NodeUpdateDrainRequest); a null DrainSpec ends the drain. */
export const NodeDrainRequestSchema = v.object({
  DrainSpec: v.optional(
    v.nullable(
      v.object({
        /** Nanoseconds; negative forces, 0 means no deadline. */
        Deadline: v.optional(v.pipe(v.number(), v.integer()), 0),
        IgnoreSystemJobs: v.optional(v.boolean(), false),
      }),
    ),
    null,
  ),
  /** With the drain ended: make the node eligible again. */
  MarkEligible: v.optional(v.boolean(), false),
});
export type NodeDrainRequest = v.InferOutput<typeof NodeDrainRequestSchema>;

/** PUT /v1/node/:id/eligibility. */
export const NodeEligibilityRequestSchema = v.object({
  Eligibility: v.picklist(["eligible", "ineligible"], 'must be "eligible" or "ineligible"'),
});

/** What Nomad answers to a node drain, eligibility or evaluate request. */
export interface NodeUpdateResponse {
  NodeModifyIndex: number;
  EvalIDs: string[];
  EvalCreateIndex: number;
  Index: number;
}

/** PUT /v1/job/:id/plan. */
export const JobPlanRequestSchema = v.object({
  Job: v.unknown(),
  Diff: v.optional(v.boolean(), false),
  PolicyOverride: v.optional(v.boolean(), false),
});

/** PUT /v1/validate/job. */
export const JobValidateRequestSchema = v.object({ Job: v.optional(v.unknown()) });

export interface JobValidateResponse {
  DriverConfigValidated: boolean;
  ValidationErrors: string[];
  Error: string;
  Warnings: string;
}

/** PUT /v1/job/:id/revert. */
export const JobRevertRequestSchema = v.object({
  JobVersion: NonNegativeInt,
  /** Revert only if the job is still at this version. */
  EnforcePriorVersion: v.optional(v.nullable(NonNegativeInt), null),
});

/** PUT /v1/job/:id/stable (Nomad's JobStabilityRequest). */
export const JobStabilityRequestSchema = v.object({
  JobVersion: NonNegativeInt,
  Stable: v.boolean(),
});

/** PUT /v1/job/:id/scale (Nomad's ScalingRequest); no Count records an event without scaling. */
export const ScalingRequestSchema = v.object({
  Count: v.optional(v.nullable(NonNegativeInt), null),
  Target: v.object({ Group: v.pipe(v.string(), v.minLength(1, "must name the group")), Job: v.optional(v.string()) }),
  Message: v.optional(v.string(), ""),
  Error: v.optional(v.boolean(), false),
  Meta: v.optional(v.nullable(v.record(v.string(), v.unknown())), null),
});
export type ScalingRequest = v.InferOutput<typeof ScalingRequestSchema>;

/** PUT /v1/search (Nomad's SearchRequest). */
export const SearchRequestSchema = v.object({
  Prefix: v.optional(v.string(), ""),
  Context: v.optional(v.string(), "all"),
  /** The namespace searched where ?namespace= names none (Nomad's body QueryOptions; its web UI sends "*" here). */
  Namespace: v.optional(v.string(), ""),
});

/** Nomad's AllocFileInfo: an entry of an alloc dir, as /v1/client/fs/ls and stat answer. */
export interface AllocFileInfo {
  Name: string;
  IsDir: boolean;
  Size: number;
  FileMode: string;
  ModTime: string;
  ContentType?: string;
}

/** POST /v1/search/fuzzy (Nomad 1.x). */
export const FuzzySearchRequestSchema = v.object({
  Text: v.string(),
  Context: v.optional(v.string(), "all"),
  /** As SearchRequestSchema's. */
  Namespace: v.optional(v.string(), ""),
});
