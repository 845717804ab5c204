/** `drover server members [-detailed] [-json] [-t]`: the servers the agent knows (GET /v1/agent/members), drover being its own. */
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, positionals, printData, withFlags, type Subcommand, type SubcommandGroup } from "../command.ts";
import { formatList } from "../format.ts";

interface AgentMember {
  Name: string;
  Addr: string;
  Port: number;
  Tags: Record<string, string>;
  Status: string;
  ProtocolCur: number;
}

const serverMembers: Subcommand = {
  summary: "Display a list of the known servers and their status",
  usage: `Usage: drover server members [options]

Options:
${ADDRESS_USAGE}
  -detailed   Show each member's tags.
${DATA_USAGE}`,
  flags: withFlags(DATA_FLAGS, { booleans: ["detailed", "verbose"] }),
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const [{ body }, { body: leader }] = await Promise.all([
      client.get<{ Members: AgentMember[] }>("/v1/agent/members"),
      client.get<string>("/v1/status/leader"),
    ]);
    const members = [...body.Members].sort((a, b) => (a.Name < b.Name ? -1 : 1));
    if (printData(io, flags, members)) return 0;
    if (flags.booleans.detailed || flags.booleans.verbose) {
      io.print(
        formatList([
          ["Name", "Address", "Port", "Tags"],
          ...members.map((member) => [member.Name, member.Addr, String(member.Port), Object.entries(member.Tags).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(",")]),
        ]),
      );
      return 0;
    }
    io.print(
      formatList([
        ["Name", "Address", "Port", "Status", "Leader", "Protocol", "Build", "Datacenter", "Region"],
        ...members.map((member) => [
          member.Name,
          member.Addr,
          String(member.Port),
          member.Status,
          String(`${member.Tags.rpc_addr ?? member.Addr}:${member.Tags.port ?? member.Port}` === leader),
          String(member.ProtocolCur),
          member.Tags.build ?? "",
          member.Tags.dc ?? "",
          member.Tags.region ?? "",
        ]),
      ]),
    );
    return 0;
  },
};

export const serverGroup: SubcommandGroup = { summary: "Interact with servers", subcommands: { members: serverMembers } };
