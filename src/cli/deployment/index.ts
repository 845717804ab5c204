/**
 * `drover deployment list|status|promote|pause|resume|fail`: a job's rollouts.
 *
 *   promote  PUT /v1/deployment/promote/:id {All | Groups}
 *   pause    PUT /v1/deployment/pause/:id {Pause: true}; resume: {Pause: false}
 *   fail     PUT /v1/deployment/fail/:id
 */
import type { Deployment, DeploymentUpdateResponse } from "../../structs/deployment.ts";
import { ADDRESS_USAGE, dispatch, OUTPUT_FLAGS, OUTPUT_USAGE, positionals, printData, printList, processIo, type CommandArgs, type Io, type Subcommand } from "../command.ts";
import { monitorEvaluation } from "../monitor.ts";
import { resolveDeployment } from "../prefix.ts";
import { deploymentRow, DEPLOYMENT_HEADER, formatDeployment } from "./format.ts";

const deploymentList: Subcommand = {
  summary: "List all deployments",
  usage: `Usage: drover deployment list [options]

Options:
${ADDRESS_USAGE}
${OUTPUT_USAGE}`,
  flags: OUTPUT_FLAGS,
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const { body } = await client.get<Deployment[]>("/v1/deployments");
    printList(io, flags, body, "No deployments found", DEPLOYMENT_HEADER, (deployment) => deploymentRow(deployment, flags.booleans.verbose ?? false));
    return 0;
  },
};

const deploymentStatus: Subcommand = {
  summary: "Display the status of a deployment",
  usage: `Usage: drover deployment status [options] <deployment>

Options:
${ADDRESS_USAGE}
${OUTPUT_USAGE}`,
  flags: OUTPUT_FLAGS,
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one deployment ID");
    const deployment = await resolveDeployment(client, prefix!);
    if (printData(io, flags, deployment)) return 0;
    io.print(formatDeployment(deployment, flags.booleans.verbose ?? false));
    return 0;
  },
};

/** A write to one deployment, then (unless -detach) the evaluation it triggered. */
function deploymentAction(
  summary: string,
  usageLine: string,
  action: string,
  body: (args: CommandArgs) => object,
  done: (deployment: Deployment, response: DeploymentUpdateResponse) => string | undefined,
  { extra = [], follows = true }: { extra?: readonly string[]; follows?: boolean } = {},
): Subcommand {
  return {
    summary,
    usage: `Usage: drover deployment ${usageLine}

Options:
${ADDRESS_USAGE}${extra.length > 0 ? `\n  -group <name>  Promote only this group; may be repeated (default: every group).` : ""}
  -detach     Return once the change is registered.
  -verbose    Full IDs.`,
    flags: { booleans: ["detach", "verbose"], repeated: [...extra] },
    async run(args) {
      const { flags, client, io } = args;
      const [prefix] = positionals(flags, 1, 1, "one deployment ID");
      const deployment = await resolveDeployment(client, prefix!);
      const response = await client.write<DeploymentUpdateResponse>("PUT", `/v1/deployment/${action}/${deployment.ID}`, { DeploymentID: deployment.ID, ...body(args) });
      const line = done(deployment, response);
      if (line !== undefined) io.print(line);
      // Nomad's pause only says so; the others follow the evaluation they trigger.
      if (!follows) return 0;
      if (flags.booleans.detach || !response.EvalID) {
        if (response.EvalID) io.print(`Evaluation ID: ${response.EvalID}`);
        return 0;
      }
      await monitorEvaluation(client, io, response.EvalID, flags.booleans.verbose ?? false);
      return 0;
    },
  };
}

export const DEPLOYMENT_SUBCOMMANDS = {
  fail: deploymentAction("Manually fail a deployment", "fail [options] <deployment>", "fail", () => ({}), (deployment, response) =>
    response.RevertedJobVersion === null
      ? `Deployment "${deployment.ID}" failed`
      : `Deployment "${deployment.ID}" failed. Auto-reverted to job version ${response.RevertedJobVersion}.`,
  ),
  list: deploymentList,
  pause: deploymentAction("Pause a deployment", "pause [options] <deployment>", "pause", () => ({ Pause: true }), (deployment) => `Deployment "${deployment.ID}" paused`, {
    follows: false,
  }),
  promote: deploymentAction(
    "Promote canaries in a deployment",
    "promote [options] <deployment>",
    "promote",
    ({ flags }) => ((flags.repeated.group ?? []).length > 0 ? { Groups: flags.repeated.group } : { All: true }),
    () => undefined,
    { extra: ["group"] },
  ),
  resume: deploymentAction("Resume a paused deployment", "resume [options] <deployment>", "pause", () => ({ Pause: false }), (deployment) => `Deployment "${deployment.ID}" resumed`),
  status: deploymentStatus,
};

export function deploymentCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("deployment", DEPLOYMENT_SUBCOMMANDS, argv, io);
}
