/** `drover system gc` and `drover system reconcile summaries`: the server's housekeeping, run now. */
import { ADDRESS_USAGE, positionals, type Subcommand, type SubcommandGroup } from "../command.ts";

const systemGc: Subcommand = {
  summary: "Run the system garbage collection process",
  usage: `Usage: drover system gc [options]

  Collects terminal jobs, evaluations, allocations and down nodes now,
  whatever their age.

Options:
${ADDRESS_USAGE}`,
  flags: {},
  async run({ flags, client }) {
    positionals(flags, 0, 0, "no arguments");
    await client.request("PUT", "/v1/system/gc");
    return 0;
  },
};

const reconcileSummaries: Subcommand = {
  summary: "Reconciles the summaries of all registered jobs",
  usage: `Usage: drover system reconcile summaries [options]

  drover computes job summaries fresh on every read, so there is nothing to
  repair; the command is here for Nomad's scripts.

Options:
${ADDRESS_USAGE}`,
  flags: {},
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    await client.request("PUT", "/v1/system/reconcile/summaries");
    io.print("Successfully reconciled job summaries");
    return 0;
  },
};

export const systemGroup: SubcommandGroup = {
  summary: "Interact with the system API",
  subcommands: { gc: systemGc, reconcile: { summary: "Performs system reconciliation", subcommands: { summaries: reconcileSummaries } } },
};
