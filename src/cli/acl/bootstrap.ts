/** `drover acl bootstrap`: the first management token, shown once. */
import type { AclToken } from "../../acl/structs.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { printToken } from "./token-format.ts";

export const aclBootstrap: Subcommand = {
  summary: "Create the first management token (once)",
  usage: `Usage: drover acl bootstrap [options]

  Creates the initial management token of an agent with acl { enabled = true }
  and prints it, its Secret ID included: this is the only time the secret is
  shown. It works once; Nomad's acl-bootstrap-reset file in <data_dir>/server
  allows it again.

Options:
${ADDRESS_USAGE}
  -json       Print the token as JSON.`,
  flags: { booleans: ["json"] },
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const token = await client.write<AclToken>("PUT", "/v1/acl/bootstrap");
    printToken(io, flags.booleans.json, token);
    return 0;
  },
};
