/** `drover job eval [options] <job>`: schedule the job again now (PUT /v1/job/:id/evaluate), as after a node came back. */
import type { JobRegisterResponse } from "../../structs/api.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { shortId } from "../format.ts";
import { monitorEvaluation } from "../monitor.ts";
import { resolveJob } from "../prefix.ts";

export const jobEval: Subcommand = {
  summary: "Force an evaluation for the job",
  usage: `Usage: drover job eval [options] <job>

Options:
${ADDRESS_USAGE}
  -force-reschedule  Also reschedule failed allocations whose delay has not passed.
  -detach            Return once the evaluation is created.
  -verbose           Full IDs.`,
  flags: { booleans: ["force-reschedule", "detach", "verbose"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one job ID");
    const verbose = flags.booleans.verbose ?? false;
    const stub = await resolveJob(client, prefix!);
    const response = await client.write<JobRegisterResponse>("PUT", `/v1/job/${encodeURIComponent(stub.ID)}/evaluate`, {
      JobID: stub.ID,
      EvalOptions: { ForceReschedule: flags.booleans["force-reschedule"] ?? false },
    });
    if (flags.booleans.detach) {
      io.print(`Created eval ID: "${shortId(response.EvalID, verbose)}"`);
      return 0;
    }
    await monitorEvaluation(client, io, response.EvalID, verbose);
    return 0;
  },
};
