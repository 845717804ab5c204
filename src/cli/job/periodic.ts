/** `drover job periodic force <job>`: launch a periodic job's child now, outside its schedule. */
import { ADDRESS_USAGE, positionals, type Subcommand, type SubcommandGroup } from "../command.ts";
import { monitorEvaluation } from "../monitor.ts";
import { resolveJob } from "../prefix.ts";

const jobPeriodicForce: Subcommand = {
  summary: "Force the launch of a periodic job",
  usage: `Usage: drover job periodic force [options] <job>

  Launches a child of the periodic job now, whatever its schedule says.

Options:
${ADDRESS_USAGE}
  -detach     Return once the launch is registered.
  -verbose    Full IDs.`,
  flags: { booleans: ["detach", "verbose"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one job ID");
    const stub = await resolveJob(client, prefix!);
    const response = await client.write<{ EvalID: string }>("PUT", `/v1/job/${encodeURIComponent(stub.ID)}/periodic/force`);
    if (flags.booleans.detach) {
      io.print("Force periodic successful");
      io.print(`Evaluation ID: ${response.EvalID}`);
      return 0;
    }
    await monitorEvaluation(client, io, response.EvalID, flags.booleans.verbose ?? false);
    return 0;
  },
};

export const jobPeriodic: SubcommandGroup = { summary: "Interact with periodic jobs", subcommands: { force: jobPeriodicForce } };
