/**
 * `drover job dispatch [options] <job> [input]`: start an instance of a
 * parameterized job, with metadata (-meta k=v) and a payload read from a
 * file or stdin ("-").
 */
import { readFileSync } from "node:fs";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { formatKV, shortId } from "../format.ts";
import { monitorEvaluation } from "../monitor.ts";
import { resolveJob } from "../prefix.ts";

interface JobDispatchResponse {
  DispatchedJobID: string;
  EvalID: string;
}

function parseMeta(pairs: readonly string[]): Record<string, string> {
  const meta: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`-meta needs key=value, got "${pair}"`);
    meta[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return meta;
}

function readPayload(source: string): string {
  try {
    return readFileSync(source === "-" ? 0 : source).toString("base64");
  } catch (err) {
    throw new UsageError(`cannot read the payload ${source}: ${(err as Error).message}`);
  }
}

export const jobDispatch: Subcommand = {
  summary: "Dispatch an instance of a parameterized job",
  usage: `Usage: drover job dispatch [options] <parameterized job> [input source]

  Starts a child of the parameterized job. The input source (a file, or "-"
  for stdin) becomes its payload.

Options:
${ADDRESS_USAGE}
  -meta <key>=<value>         Metadata for the child; may be repeated.
  -idempotency-token <token>  Dispatch at most once per token.
  -detach                     Return once the child is registered.
  -verbose                    Full IDs.`,
  flags: { booleans: ["detach", "verbose"], strings: ["idempotency-token"], repeated: ["meta"] },
  async run({ flags, client, io }) {
    const [prefix, source] = positionals(flags, 1, 2, "a job ID and optionally an input source");
    const verbose = flags.booleans.verbose ?? false;
    const stub = await resolveJob(client, prefix!);
    const response = await client.write<JobDispatchResponse>(
      "PUT",
      `/v1/job/${encodeURIComponent(stub.ID)}/dispatch`,
      {
        JobID: stub.ID,
        Meta: parseMeta(flags.repeated.meta ?? []),
        ...(source !== undefined ? { Payload: readPayload(source) } : {}),
        ...(flags.strings["idempotency-token"] ? { IdempotencyToken: flags.strings["idempotency-token"] } : {}),
      },
    );
    io.print(formatKV([
      ["Dispatched Job ID", response.DispatchedJobID],
      ["Evaluation ID", shortId(response.EvalID, verbose)],
    ]));
    if (flags.booleans.detach || !response.EvalID) return 0;
    io.print("");
    await monitorEvaluation(client, io, response.EvalID, verbose);
    return 0;
  },
};
