/** `drover job deployments [options] <job>`: a job's deployments, newest first (-latest: the newest one in full). */
import type { Deployment } from "../../structs/deployment.ts";
import { ADDRESS_USAGE, OUTPUT_FLAGS, OUTPUT_USAGE, positionals, printData, printList, withFlags, type Subcommand } from "../command.ts";
import { deploymentRow, DEPLOYMENT_HEADER, formatDeployment } from "../deployment/format.ts";
import { resolveJob } from "../prefix.ts";

export const jobDeployments: Subcommand = {
  summary: "List deployments for a job",
  usage: `Usage: drover job deployments [options] <job>

Options:
${ADDRESS_USAGE}
  -latest     Only the newest deployment, in full.
  -all        Also deployments of earlier job instances with the same ID.
${OUTPUT_USAGE}`,
  flags: withFlags(OUTPUT_FLAGS, { booleans: ["latest", "all"] }),
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one job ID");
    const verbose = flags.booleans.verbose ?? false;
    const stub = await resolveJob(client, prefix!);
    const path = `/v1/job/${encodeURIComponent(stub.ID)}`;
    if (flags.booleans.latest) {
      const { body: deployment } = await client.get<Deployment | null>(`${path}/deployment`);
      if (printData(io, flags, deployment)) return 0;
      io.print(deployment ? formatDeployment(deployment, verbose) : `Job "${stub.ID}" has no deployment`);
      return 0;
    }
    const { body } = await client.get<Deployment[]>(`${path}/deployments`, { all: flags.booleans.all ? true : undefined });
    printList(io, flags, body, `No deployments found for job "${stub.ID}"`, DEPLOYMENT_HEADER, (deployment) => deploymentRow(deployment, verbose));
    return 0;
  },
};
