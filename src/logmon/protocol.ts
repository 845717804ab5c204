/**
 * The agent <-> logmon protocol (JSON lines over the logmon's unix socket).
 *
 *   register(task)    start pumping the task's FIFOs into rotated files; idempotent
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

export const LOGMON_PROTOCOL = {
  register: { params: LogmonTaskSchema, result: v.object({ created: v.boolean() }) },
  deregister: { params: TaskId, result: v.object({ removed: v.boolean() }) },
  flush: { params: TaskId, result: v.object({ bytes: v.number() }) },
  version: {
    params: v.object({}),
    result: v.object({ version: v.string(), pid: v.number(), tasks: v.number() }),
  },
};
export type LogmonProtocol = typeof LOGMON_PROTOCOL;
