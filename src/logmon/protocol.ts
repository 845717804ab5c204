/**
 * The agent <-> logmon protocol (JSON lines over the logmon's unix socket).
 *
 *   register(task)    start pumping the task's FIFOs into rotated files; idempotent
 *   deregister({id})  flush, then stop pumping; unknown ids are fine
 *   flush({id})       move everything now in the task's FIFOs into its files, answer when done
 *   version()         probe: who is answering, and how many tasks it serves
 */
import * as v from "valibot";
import { isSafeTaskName } from "../logs/layout.ts";

/** Nomad's LogConfig defaults: 10 files of 10 MB per stream. */
export const DEFAULT_MAX_FILES = 10;
export const DEFAULT_MAX_FILE_SIZE_MB = 10;

/** Bounds that keep a typo from filling a disk or opening thousands of files. */
const MAX_FILES_LIMIT = 10_000;
const MAX_FILE_SIZE_MB_LIMIT = 1 << 20;

export const LogmonTaskSchema = v.strictObject({
  /** The task runner's key for the task (alloc id and task name); what deregister and flush name. */
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(512)),
  /** The alloc's log dir (alloc/logs), absolute. */
  logDir: v.pipe(v.string(), v.startsWith("/", "must be an absolute path"), v.check((path) => !path.includes("\0"), "must not contain NUL")),
  taskName: v.pipe(v.string(), v.check(isSafeTaskName, "must be a non-empty file name component")),
  maxFiles: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_FILES_LIMIT)),
  maxFileSizeMB: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_FILE_SIZE_MB_LIMIT)),
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
