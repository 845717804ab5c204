/**
 * `drover alloc logs [-f] [-stderr] [-tail] [-n N] [-c BYTES] <alloc> [task]`:
 * a task's stdout or stderr, served by the client's file-system endpoint
 * (GET /v1/client/fs/logs/:alloc_id, plain=true). With -n the client is
 * asked for the last N×120 bytes (Nomad's estimate of a line) and the last
 * N lines of what comes back are printed; with -f the stream then goes on.
 */
import { ADDRESS_USAGE, positionals, type Io, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { chooseTask, fetchAlloc } from "./tasks.ts";

/** Nomad's bytes-per-line guess when asked for the last N lines. */
export const BYTES_PER_LINE = 120;
/** Lines shown by -tail without -n (Nomad's default). */
export const DEFAULT_TAIL_LINES = 10;
/**
 * With -f and -n, what arrives within this first moment is the backlog whose
 * last N lines are shown; everything after streams as it comes.
 */
const TAIL_SETTLE_MS = 250;

/** The last `count` lines of `text` (a trailing newline does not count as a line). */
export function lastLines(text: string, count: number): string {
  // slice(-0) would keep every line.
  if (count === 0) return "";
  const lines = text.split("\n");
  const trailing = lines.at(-1) === "" ? lines.pop() : undefined;
  return lines.slice(-count).join("\n") + (trailing !== undefined && lines.length > 0 ? "\n" : "");
}

export function count(flag: string | undefined, name: string): number | undefined {
  if (flag === undefined) return undefined;
  if (!/^\d+$/.test(flag)) throw new UsageError(`-${name} needs a non-negative integer, got "${flag}"`);
  return Number(flag);
}

/** Writes a plain stream out; with `lines`, only the last lines of its backlog, then (following) everything after. */
export async function printStream(body: ReadableStream<Uint8Array>, io: Io, lines: number | undefined, follow: boolean): Promise<void> {
  const reader = body.getReader();
  if (lines === undefined) {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) io.write(chunk.value);
    return;
  }
  const decoder = new TextDecoder();
  let backlog = "";
  let settled = false;
  const flush = () => {
    if (settled) return;
    settled = true;
    io.write(lastLines(backlog, lines));
  };
  const timer = follow ? setTimeout(flush, TAIL_SETTLE_MS) : undefined;
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      if (settled) io.write(chunk.value);
      else backlog += decoder.decode(chunk.value, { stream: true });
    }
    backlog += decoder.decode();
    flush();
  } finally {
    clearTimeout(timer);
  }
}

export const allocLogs: Subcommand = {
  summary: "Print a task's logs",
  usage: `Usage: drover alloc logs [options] <allocation> [task]

  Prints the task's stdout (or stderr). The task may be omitted when the
  allocation has one.

Options:
${ADDRESS_USAGE}
  -stderr        Show stderr instead of stdout.
  -f             Follow: keep printing as the task writes.
  -tail          Start from the end (the last ${DEFAULT_TAIL_LINES} lines unless -n or -c).
  -n <lines>     The last n lines (implies -tail).
  -c <bytes>     The last c bytes (implies -tail).
  -task <task>   The task, instead of the second argument.`,
  flags: { booleans: ["stderr", "f", "tail"], strings: ["n", "c", "task"] },
  async run({ flags, client, io }) {
    const [prefix, taskArg] = positionals(flags, 1, 2, "an allocation ID and optionally a task");
    if (taskArg !== undefined && flags.strings.task !== undefined) throw new UsageError("give the task as -task or as an argument, not both");
    const lineCount = count(flags.strings.n, "n");
    const byteCount = count(flags.strings.c, "c");
    if (lineCount !== undefined && byteCount !== undefined) throw new UsageError("-n and -c cannot be combined");
    const alloc = await fetchAlloc(client, prefix!);
    const task = chooseTask(alloc, flags.strings.task ?? taskArg);
    const tail = flags.booleans.tail || lineCount !== undefined || byteCount !== undefined;
    const lines = byteCount !== undefined ? undefined : (lineCount ?? (tail ? DEFAULT_TAIL_LINES : undefined));
    const follow = flags.booleans.f ?? false;
    const response = await client.request("GET", `/v1/client/fs/logs/${encodeURIComponent(alloc.ID)}`, {
      query: {
        task,
        type: flags.booleans.stderr ? "stderr" : "stdout",
        origin: tail ? "end" : "start",
        offset: byteCount ?? (lines !== undefined ? lines * BYTES_PER_LINE : 0),
        follow,
        plain: true,
      },
    });
    if (response.body) await printStream(response.body, io, lines, follow);
    return 0;
  },
};
