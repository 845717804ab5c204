/**
 * `drover alloc exec [-task T] <allocation> <command> [args...]`: runs a
 * command inside a running task (for an exec task: in its namespaces,
 * chroot and cgroup), prints what it wrote, and exits with its exit code.
 * Non-interactive: output arrives when the command ends.
 */
import { parseDuration } from "../../lib/duration.ts";
import type { AllocExecRequest, AllocExecResponse } from "../../structs/api.ts";
import { ADDRESS_USAGE, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { chooseTask, fetchAlloc } from "./tasks.ts";

export const allocExec: Subcommand = {
  summary: "Run a command inside a running task",
  usage: `Usage: drover alloc exec [options] <allocation> <command> [args...]

  Runs the command in the task's context (an exec task's namespaces, chroot
  and cgroup; a raw_exec task's environment and directory), prints its output
  and exits with its exit code. Put "--" before a command whose arguments
  start with "-".

Options:
${ADDRESS_USAGE}
  -task <task>       The task, when the allocation has several.
  -timeout <dur>     Kill the command after this long (default 5m).`,
  flags: { strings: ["task", "timeout"] },
  async run({ flags, client, io }) {
    const [prefix, ...command] = flags.positionals;
    if (prefix === undefined || command.length === 0) throw new UsageError("expected an allocation ID and a command");
    let timeoutMs: number | undefined;
    if (flags.strings.timeout !== undefined) {
      try {
        timeoutMs = parseDuration(flags.strings.timeout);
      } catch (err) {
        throw new UsageError(`-timeout: ${(err as Error).message}`);
      }
    }
    const alloc = await fetchAlloc(client, prefix);
    const request: AllocExecRequest = { Task: chooseTask(alloc, flags.strings.task), Cmd: command, ...(timeoutMs ? { TimeoutMs: timeoutMs } : {}) };
    const result = await client.write<AllocExecResponse>("POST", `/v1/client/allocation/${encodeURIComponent(alloc.ID)}/exec`, request);
    io.write(result.Stdout);
    if (result.Stderr) io.error(result.Stderr.replace(/\n$/, ""));
    return result.ExitCode;
  },
};
