/**
 * `drover alloc checks <alloc>`: the latest result of each of an
 * allocation's service checks (Nomad 1.4+'s command), from
 * GET /v1/client/allocation/:id/checks.
 */
import type { AllocCheckStatus } from "../../structs/check-status.ts";
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, positionals, printData, withFlags, type Subcommand } from "../command.ts";
import { formatList, formatTime, orNone } from "../format.ts";
import { fetchAlloc } from "./tasks.ts";

const order = (check: AllocCheckStatus) => [check.Group, check.Task ?? "", check.Service, check.Check].join("\0");

export const allocChecks: Subcommand = {
  summary: "Outputs service health check status information",
  usage: `Usage: drover alloc checks [options] <allocation>

  Outputs the latest health check status information for services in the
  allocation (drover runs every service's checks itself).

Options:
${ADDRESS_USAGE}
${DATA_USAGE}
  -verbose       Accepted, as Nomad's (checks are shown in full either way).`,
  flags: withFlags(DATA_FLAGS, { booleans: ["verbose"] }),
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one allocation ID");
    const alloc = await fetchAlloc(client, prefix!);
    const { body: checks } = await client.get<Record<string, AllocCheckStatus>>(`/v1/client/allocation/${encodeURIComponent(alloc.ID)}/checks`, {
      namespace: alloc.Namespace,
    });
    if (printData(io, flags, checks)) return 0;
    const list = Object.values(checks).sort((a, b) => (order(a) < order(b) ? -1 : 1));
    const blocks = list.map((check) => {
      const rows: string[][] = [
        ["ID", check.ID],
        ["Name", check.Check],
        ["Group", check.Group],
        ["Task", check.Task || "(group)"],
        ["Service", check.Service],
        ["Status", check.Status],
        ...(check.StatusCode ? [["StatusCode", String(check.StatusCode)]] : []),
        ["Mode", check.Mode],
        ["Timestamp", formatTime(new Date(check.Timestamp * 1000))],
        ["Output", check.Output],
      ];
      // Nomad's formatList shows an empty value (a 204's output) as <none>.
      return `${formatList(rows.map(([key, value]) => [key!, "=", orNone(value!)]))}\n`;
    });
    io.print([`Status of ${list.length} Nomad Service Checks\n`, ...blocks].join("\n"));
    return 0;
  },
};
