/**
 * The `drover nsenter` role: builds an exec task's isolation, then becomes the
 * task with execve. Started only by the executor, through launch.ts.
 *
 *   drover nsenter <spec.json>                   isolate and become the task (IsolationSpec)
 *   drover nsenter --exec <task pid> <spec.json> become a command inside a running task (ExecSpec)
 *   drover nsenter --session <command> [args...] become the command with fd 0 as controlling terminal
 *                                                (a raw_exec terminal session: env, cwd, user and
 *                                                cgroup are already the task's)
 *
 * It returns only on failure, with the exit codes in errors.ts.
 */
import { readFileSync, writeSync } from "node:fs";
import type * as v from "valibot";
import { parseOrThrow } from "../lib/validation.ts";
import { becomeTask, takeTerminal } from "./become.ts";
import { enterTask } from "./enter.ts";
import { EXIT_SETUP_FAILED, IsolationError } from "./errors.ts";
import { isolateTask } from "./isolate.ts";
import { ExecSpecSchema, IsolationSpecSchema } from "./spec.ts";

const USAGE = "usage: drover nsenter <spec.json> | drover nsenter --exec <task pid> <spec.json> | drover nsenter --session <command> [args...]";

function readSpec<S extends v.GenericSchema>(schema: S, path: string): v.InferOutput<S> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new IsolationError(`read spec ${path}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new IsolationError(`spec ${path} is not JSON: ${(err as Error).message}`);
  }
  return parseOrThrow(schema, json, `spec ${path}`);
}

function run(argv: readonly string[]): never {
  if (argv[0] === "--exec" && argv.length === 3 && /^[1-9]\d*$/.test(argv[1]!)) {
    return enterTask(Number(argv[1]), readSpec(ExecSpecSchema, argv[2]!));
  }
  if (argv[0] === "--session" && argv.length >= 2) {
    takeTerminal();
    // The spawn already put this process in the task's directory, as root: the task's user may not reach it by path.
    return becomeTask(argv.slice(1), process.env as Record<string, string>);
  }
  if (argv.length === 1 && !argv[0]!.startsWith("-")) return isolateTask(readSpec(IsolationSpecSchema, argv[0]!));
  throw new IsolationError(USAGE);
}

export async function main(argv: readonly string[]): Promise<number> {
  try {
    return run(argv);
  } catch (err) {
    // Written directly: the process exits right after, and this is the task's stderr.
    writeSync(2, `drover nsenter: ${(err as Error).message}\n`);
    return err instanceof IsolationError ? err.exitCode : EXIT_SETUP_FAILED;
  }
}
