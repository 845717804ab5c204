/** `drover job promote [options] <job>`: promote the canaries of the job's latest deployment (all groups, or -group ones). */
import type { Deployment, DeploymentUpdateResponse } from "../../structs/deployment.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { AgentError } from "../http-client.ts";
import { monitorEvaluation } from "../monitor.ts";
import { resolveJob } from "../prefix.ts";

export const jobPromote: Subcommand = {
  summary: "Promote a job's canaries",
  usage: `Usage: drover job promote [options] <job>

  Promotes the canaries of the job's latest deployment, so the rest of the
  update rolls out.

Options:
${ADDRESS_USAGE}
  -group <name>  Promote only this group; may be repeated (default: every group).
  -detach        Return once the promotion is registered.
  -verbose       Full IDs.`,
  flags: { booleans: ["detach", "verbose"], repeated: ["group"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one job ID");
    const stub = await resolveJob(client, prefix!);
    const { body: deployment } = await client.get<Deployment | null>(`/v1/job/${encodeURIComponent(stub.ID)}/deployment`);
    if (!deployment) throw new AgentError(404, `Job "${stub.ID}" has no deployment to promote`);
    const groups = flags.repeated.group ?? [];
    const response = await client.write<DeploymentUpdateResponse>("PUT", `/v1/deployment/promote/${deployment.ID}`, {
      DeploymentID: deployment.ID,
      ...(groups.length > 0 ? { Groups: groups } : { All: true }),
    });
    if (flags.booleans.detach) {
      io.print(`Evaluation ID: ${response.EvalID}`);
      return 0;
    }
    await monitorEvaluation(client, io, response.EvalID, flags.booleans.verbose ?? false);
    return 0;
  },
};
