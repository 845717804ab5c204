/**
 * The agent <-> logmon protocol (JSON lines over the logmon's unix socket).
 *
 *   register(task)    start pumping the task's FIFOs into rotated files; idempotent
 *   registerBatch({tasks})  register for each task, in one call: one wake-up of the
 *                     pump and one journal write for a burst; each task answered alone
 *   deregister({id})  flush, then stop pumping; unknown ids are fine
 *   flush({id})       move everything now in the task's FIFOs into its files, answer when done
 *   version()         probe: who is answering, and how many tasks it serves
 */
import * as v from "valibot";
import { LogMaxFileSizeMbSchema, LogMaxFilesSchema } from "../lib/log-config.ts";
import { isSafeTaskName } from "../log-layout/layout.ts";


export const LogmonTaskSchema = v.strictObject({
  /** The task runner's key for the task (alloc id and task name); what deregister and flush name. */
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(512)),
  /** The alloc's log dir (alloc/logs), absolute. */
  logDir: v.pipe(v.string(), v.startsWith("/", "must be an absolute path"), v.check((path) => !path.includes("\0"), "must not contain NUL")),
  taskName: v.pipe(v.string(), v.check(isSafeTaskName, "must be a non-empty file name component")),
  maxFiles: LogMaxFilesSchema,
  maxFileSizeMB: LogMaxFileSizeMbSchema,
});
export type LogmonTask = v.InferOutput<typeof LogmonTaskSchema>;

const TaskId = v.strictObject({ id: v.pipe(v.string(), v.minLength(1)) });

const RegisterResult = v.object({ created: v.boolean() });

/**
 * A batch's tasks are checked one by one against LogmonTaskSchema by the
 * logmon (Logmon.registerBatch), as separate register calls would be: one
 * bad task is refused with its own error and the rest are registered.
 */
export const RegisterBatchSchema = v.strictObject({ tasks: v.array(v.unknown()) });

/** Each task's answer, in the order sent: what register answers, or why it refused the task. */
export const RegisterBatchResultSchema = v.object({ results: v.array(v.union([RegisterResult, v.strictObject({ error: v.string() })])) });
export type RegisterBatchResult = v.InferOutput<typeof RegisterBatchResultSchema>;

export const LOGMON_PROTOCOL = {
  register: { params: LogmonTaskSchema, result: RegisterResult },
  /** Added 2026-11-27: a logmon from before answers `unknown method "registerBatch"`, and the agent registers one by one. */
  registerBatch: { params: RegisterBatchSchema, result: RegisterBatchResultSchema },
  deregister: { params: TaskId, result: v.object({ removed: v.boolean() }) },
  flush: { params: TaskId, result: v.object({ bytes: v.number() }) },
  version: {
    params: v.object({}),
    result: v.object({ version: v.string(), pid: v.number(), tasks: v.number() }),
  },
};
export type LogmonProtocol = typeof LOGMON_PROTOCOL;
