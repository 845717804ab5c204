/** `drover job stop [-purge] [-detach] [-yes] <job>`: stop a job's allocations, or remove the job with -purge. */
import type { JobDeregisterResponse } from "../../structs/api.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { monitorEvaluation } from "../monitor.ts";
import { AmbiguousPrefixError, resolveJob } from "../prefix.ts";

export const jobStop: Subcommand = {
  summary: "Stop a running job",
  usage: `Usage: drover job stop [options] <job>

  Tells every allocation of the job to stop. The job stays listed as dead
  until it is garbage-collected; -purge removes it at once.

Options:
${ADDRESS_USAGE}
  -purge      Remove the job from the server, not only stop it.
  -detach     Return once the stop is registered.
  -yes        Accept a job ID prefix that is not the full ID.
  -verbose    Full IDs.`,
  flags: { booleans: ["purge", "detach", "yes", "verbose"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one job ID");
    const job = await resolveJob(client, prefix!);
    if (job.ID !== prefix && !flags.booleans.yes) {
      throw new AmbiguousPrefixError(`"${prefix}" is a prefix of job "${job.ID}": give the full ID, or pass -yes`);
    }
    const response = await client.write<JobDeregisterResponse>("DELETE", `/v1/job/${encodeURIComponent(job.ID)}`, undefined, {
      purge: flags.booleans.purge ? true : undefined,
    });
    if (flags.booleans.detach) {
      io.print(`Evaluation ID: ${response.EvalID}`);
      return 0;
    }
    await monitorEvaluation(client, io, response.EvalID, flags.booleans.verbose ?? false);
    return 0;
  },
};
