/**
 * `drover alloc exec [-i] [-t] [-e C] [-task T] <allocation> [--] <command> [args...]`:
 * a command inside a running task, interactively, over the same websocket
 * as Nomad's `alloc exec` (GET /v1/client/allocation/:id/exec). Nomad's
 * flags and defaults: -i on, -t when stdin and stdout are terminals. Flags
 * may also follow the allocation, up to "--" or the command's first word.
 */
import { parseFlags, UsageError, type FlagSpec, type ParsedFlags } from "../flags.ts";
import { ADDRESS_USAGE, type Subcommand } from "../command.ts";
import { runExecSession } from "./exec-session.ts";
import { chooseTask, fetchAlloc, randomJobAlloc } from "./tasks.ts";

const FLAGS: FlagSpec = { booleans: ["i", "t", "job"], strings: ["task", "e"], stopAtPositional: true };

/** Nomad's escape character for terminal sessions; "none" turns escapes off. */
const DEFAULT_ESCAPE = "~";

/** The allocation (or job), the command, and the flags given before and after it. */
function splitArguments(flags: ParsedFlags): { prefix: string; command: string[]; flags: ParsedFlags } {
  const [prefix, ...rest] = flags.positionals;
  if (prefix === undefined) throw new UsageError(flags.booleans.job ? "a job ID is required" : "an allocation ID is required");
  let merged = flags;
  let command = rest;
  if (rest[0]?.startsWith("-") && rest[0] !== "--") {
    const after = parseFlags(rest, FLAGS);
    merged = { ...flags, booleans: { ...flags.booleans, ...after.booleans }, strings: { ...flags.strings, ...after.strings } };
    command = after.positionals;
  }
  if (command[0] === "--") command = command.slice(1);
  if (command.length === 0) throw new UsageError("a command is required");
  return { prefix, command, flags: merged };
}

export const allocExec: Subcommand = {
  summary: "Run a command inside a running task",
  usage: `Usage: drover alloc exec [options] <allocation> [--] <command> [args...]
       drover alloc exec -job [options] <job> [--] <command> [args...]

  Runs the command in the task's context (an exec task's namespaces, chroot,
  user and cgroup; a raw_exec task's environment, directory, user and
  cgroup), connected to this terminal, and exits with its exit code. Leaving
  (Ctrl-C without -t, the escape, a lost connection) ends the command.

Options:
${ADDRESS_USAGE}
  -task <task>   The task, when the allocation has several.
  -job           Exec into a random running allocation of the job (any of
                 its allocations when none runs).
  -i             Pass stdin to the command (default true; -i=false to disable).
  -t             Run the command on a terminal (default: when stdin and stdout
                 are terminals; -t=false to disable). Needs -i.
  -e <char>      Escape character of a terminal session (default "~"): at the
                 start of a line, "~." closes the connection. "none" disables it.`,
  flags: FLAGS,
  async run({ flags: given, client, io }) {
    const { prefix, command, flags } = splitArguments(given);
    const stdin = flags.booleans.i ?? true;
    const tty = flags.booleans.t ?? Boolean(process.stdin.isTTY && process.stdout.isTTY);
    if (tty && !stdin) throw new UsageError("-i must be enabled if running with tty");
    const escapeFlag = flags.strings.e ?? DEFAULT_ESCAPE;
    if (escapeFlag !== "none" && escapeFlag.length !== 1) throw new UsageError("-e requires 'none' or a single character");
    if (tty && !process.stdin.isTTY) throw new UsageError("-t needs stdin to be a terminal");
    const alloc = await fetchAlloc(client, flags.booleans.job ? await randomJobAlloc(client, prefix) : prefix);
    const task = chooseTask(alloc, flags.strings.task);
    const socket = client.websocket(`/v1/client/allocation/${encodeURIComponent(alloc.ID)}/exec`, { command: JSON.stringify(command), task, tty });
    return runExecSession(socket, client.address, { tty, stdin, escape: escapeFlag === "none" ? null : escapeFlag }, io);
  },
};
