/** `drover job inspect <job>`: the job as the server stores it, as {"Job": {...}} (which job run -json takes back). */
import type { Job } from "../../structs/job.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { resolveJob } from "../prefix.ts";

export const jobInspect: Subcommand = {
  summary: "Print a job's stored definition as JSON",
  usage: `Usage: drover job inspect [options] <job>

  Prints the job as {"Job": {...}}, the form "drover job run -json" takes.

Options:
${ADDRESS_USAGE}
  -json       Accepted for symmetry; the output is always JSON.`,
  flags: { booleans: ["json"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one job ID");
    const stub = await resolveJob(client, prefix!);
    const { body: job } = await client.get<Job>(`/v1/job/${encodeURIComponent(stub.ID)}`);
    io.print(JSON.stringify({ Job: job }, null, 4));
    return 0;
  },
};
