/**
 * `drover alloc fs [options] <allocation> [path]`: browse an allocation's
 * directory as Nomad's CLI does. A directory lists as a table, a file
 * prints (-tail/-n/-c: its end; -f: then follows it), -stat describes
 * the path itself.
 *
 *   GET /v1/client/fs/stat/:alloc?path=   what the path is
 *   GET /v1/client/fs/ls/:alloc?path=     a directory's entries
 *   GET /v1/client/fs/stream/:alloc?path=&origin=&offset=&follow=&plain=true
 */
import type { AllocFileInfo } from "../../structs/api.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { formatBytes, formatList, formatTime } from "../format.ts";
import { BYTES_PER_LINE, count, DEFAULT_TAIL_LINES, printStream } from "./logs.ts";
import { fetchAlloc, randomJobAlloc } from "./tasks.ts";

function entryRow(entry: AllocFileInfo, machine: boolean): string[] {
  return [entry.FileMode, machine ? String(entry.Size) : formatBytes(entry.Size), formatTime(new Date(entry.ModTime)), entry.IsDir ? `${entry.Name}/` : entry.Name];
}

export const allocFs: Subcommand = {
  summary: "Inspect the contents of an allocation directory",
  usage: `Usage: drover alloc fs [options] <allocation> [path]

  Lists a directory of the allocation (default "/"), or prints a file.

Options:
${ADDRESS_USAGE}
  -H          Sizes in bytes, not human-readable.
  -job        The argument is a job ID: use one of its allocations at random.
  -stat       Describe the path instead of listing or printing it.
  -f          Follow the file as it grows.
  -tail       Print the end of the file (the last ${DEFAULT_TAIL_LINES} lines unless -n or -c).
  -n <lines>  The last n lines (implies -tail).
  -c <bytes>  The last c bytes (implies -tail).
  -verbose    Accepted for Nomad's scripts.`,
  flags: { booleans: ["H", "job", "stat", "f", "tail", "verbose"], strings: ["n", "c"] },
  async run({ flags, client, io }) {
    const [prefix, path = "/"] = positionals(flags, 1, 2, "an allocation ID and optionally a path");
    const lineCount = count(flags.strings.n, "n");
    const byteCount = count(flags.strings.c, "c");
    if (lineCount !== undefined && byteCount !== undefined) throw new UsageError("-n and -c cannot be combined");
    const alloc = await fetchAlloc(client, flags.booleans.job ? await randomJobAlloc(client, prefix!) : prefix!);
    const at = (endpoint: string) => `/v1/client/fs/${endpoint}/${encodeURIComponent(alloc.ID)}`;
    const machine = flags.booleans.H ?? false;
    const { body: info } = await client.get<AllocFileInfo>(at("stat"), { path });
    if (flags.booleans.stat) {
      const [mode, size, modified, name] = entryRow(info, machine);
      io.print(formatList([["Mode", "Size", "Modified Time", "Content Type", "Name"], [mode!, size!, modified!, info.ContentType ?? "", name!]]));
      return 0;
    }
    if (info.IsDir) {
      const { body: entries } = await client.get<AllocFileInfo[]>(at("ls"), { path });
      io.print(formatList([["Mode", "Size", "Modified Time", "Name"], ...entries.map((entry) => entryRow(entry, machine))]));
      return 0;
    }
    const tail = flags.booleans.tail || lineCount !== undefined || byteCount !== undefined;
    const lines = byteCount !== undefined ? undefined : (lineCount ?? (tail ? DEFAULT_TAIL_LINES : undefined));
    const follow = flags.booleans.f ?? false;
    const response = await client.request("GET", at("stream"), {
      query: { path, origin: tail ? "end" : "start", offset: byteCount ?? (lines !== undefined ? lines * BYTES_PER_LINE : 0), follow, plain: true },
    });
    if (response.body) await printStream(response.body, io, lines, follow);
    return 0;
  },
};
