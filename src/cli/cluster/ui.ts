/** `drover ui`: where the agent's web UI is (drover agents run on servers without a browser, so it prints the address). */
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";

export const openUi: Subcommand = {
  summary: "Print the web UI's address",
  usage: `Usage: drover ui [options] [job]

  Prints the address of the agent's web UI (of the job's page when a job is
  given), to open in a browser.

Options:
${ADDRESS_USAGE}`,
  flags: { booleans: ["show-url"] },
  async run({ flags, client, io }) {
    const [job] = positionals(flags, 0, 1, "at most one job ID");
    // Checks the address answers as an agent before sending anyone there.
    await client.get("/v1/agent/self");
    io.print(`Web UI: ${client.address}/ui${job === undefined ? "" : `/jobs/${encodeURIComponent(job)}`}`);
    return 0;
  },
};
