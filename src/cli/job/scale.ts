/** `drover job scale [options] <job> [<group>] <count>`: set a group's count (the group may be left out when the job has one). */
import type { JobRegisterResponse } from "../../structs/api.ts";
import type { Job } from "../../structs/job.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { monitorEvaluation } from "../monitor.ts";
import { resolveJob } from "../prefix.ts";

export const jobScale: Subcommand = {
  summary: "Change the count of a job's task group",
  usage: `Usage: drover job scale [options] <job> [<group>] <count>

  Sets the group's count. The group can be left out when the job has only one.

Options:
${ADDRESS_USAGE}
  -detach     Return once the change is registered.
  -verbose    Full IDs.`,
  flags: { booleans: ["detach", "verbose"] },
  async run({ flags, client, io }) {
    const args = positionals(flags, 2, 3, "a job ID, optionally a group, and a count");
    const [prefix, groupArg, countText] = args.length === 2 ? [args[0]!, undefined, args[1]!] : [args[0]!, args[1]!, args[2]!];
    if (!/^\d+$/.test(countText)) throw new UsageError(`Failed to convert count string to int: "${countText}"`);
    const stub = await resolveJob(client, prefix);
    const path = `/v1/job/${encodeURIComponent(stub.ID)}`;
    const { body: job } = await client.get<Job>(path);
    const groups = job.TaskGroups.map((group) => group.Name);
    if (groupArg === undefined && groups.length !== 1) throw new UsageError(`Group name required: job "${stub.ID}" has groups ${groups.join(", ")}`);
    const group = groupArg ?? groups[0]!;
    if (!groups.includes(group)) throw new UsageError(`Group ${group} not found within job`);
    const response = await client.write<JobRegisterResponse>("PUT", `${path}/scale`, {
      Count: Number(countText),
      Target: { Job: stub.ID, Group: group },
      Message: "submitted using the drover CLI",
    });
    if (response.Warnings) io.print(`Job Warnings:\n${response.Warnings}\n`);
    if (flags.booleans.detach) {
      io.print(`Evaluation ID: ${response.EvalID}`);
      return 0;
    }
    // The group has that count already: the server made no evaluation to follow.
    if (response.EvalID === "") return 0;
    await monitorEvaluation(client, io, response.EvalID, flags.booleans.verbose ?? false);
    return 0;
  },
};
