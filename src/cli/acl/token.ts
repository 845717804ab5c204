/** `drover acl token create|list|self|info|delete`: ACL tokens. */
import type { AclToken, AclTokenStub } from "../../acl/structs.ts";
import { UsageError } from "../flags.ts";
import { ADDRESS_USAGE, positionals, printList, type Io, type Subcommand } from "../command.ts";
import type { AgentClient } from "../http-client.ts";
import { printToken, TOKEN_HEADER, tokenRow } from "./token-format.ts";

const JSON_USAGE = "  -json       JSON for scripts.";

async function showToken(client: AgentClient, io: Io, json: boolean | undefined, path: string): Promise<number> {
  const { body } = await client.get<AclToken>(path);
  printToken(io, json, body);
  return 0;
}

export const aclTokenCreate: Subcommand = {
  summary: "Create a token",
  usage: `Usage: drover acl token create [options]

  Creates a token and prints it with its Secret ID, the only time the secret
  is shown. A client token needs at least one -policy; a management token
  may do everything and names none.

Options:
${ADDRESS_USAGE}
  -name <name>       A name for the token.
  -type <type>       client (default) or management.
  -policy <name>     A policy the token holds (repeat for more).
  -global            Mark the token global (Nomad's flag; drover has one region).
  -ttl <duration>    The token expires after this long ("1h", "30m").
${JSON_USAGE}`,
  flags: { strings: ["name", "type", "ttl"], repeated: ["policy"], booleans: ["global", "json"] },
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments (use flags)");
    const type = flags.strings.type ?? "client";
    if (type !== "client" && type !== "management") throw new UsageError(`-type must be client or management, not "${type}"`);
    const token = await client.write<AclToken>("PUT", "/v1/acl/token", {
      Name: flags.strings.name ?? "",
      Type: type,
      Policies: flags.repeated.policy ?? [],
      Global: flags.booleans.global ?? false,
      ...(flags.strings.ttl ? { ExpirationTTL: flags.strings.ttl } : {}),
    });
    printToken(io, flags.booleans.json, token);
    return 0;
  },
};

export const aclTokenList: Subcommand = {
  summary: "List tokens (management only)",
  usage: `Usage: drover acl token list [options]

  Lists every token, without secrets.

Options:
${ADDRESS_USAGE}
${JSON_USAGE}`,
  flags: { booleans: ["json"] },
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const { body } = await client.get<AclTokenStub[]>("/v1/acl/tokens");
    printList(io, flags, body, "No tokens found", TOKEN_HEADER, tokenRow);
    return 0;
  },
};

export const aclTokenSelf: Subcommand = {
  summary: "Show the token in use",
  usage: `Usage: drover acl token self [options]

  Shows the token this command sends (-token, $DROVER_TOKEN or $NOMAD_TOKEN).

Options:
${ADDRESS_USAGE}
${JSON_USAGE}`,
  flags: { booleans: ["json"] },
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    return showToken(client, io, flags.booleans.json, "/v1/acl/token/self");
  },
};

export const aclTokenInfo: Subcommand = {
  summary: "Show a token by its accessor ID",
  usage: `Usage: drover acl token info [options] <accessor id>

Options:
${ADDRESS_USAGE}
${JSON_USAGE}`,
  flags: { booleans: ["json"] },
  async run({ flags, client, io }) {
    const [accessor] = positionals(flags, 1, 1, "a token's accessor ID");
    return showToken(client, io, flags.booleans.json, `/v1/acl/token/${encodeURIComponent(accessor!)}`);
  },
};

export const aclTokenDelete: Subcommand = {
  summary: "Delete a token by its accessor ID",
  usage: `Usage: drover acl token delete [options] <accessor id>

  The token stops working at once.

Options:
${ADDRESS_USAGE}`,
  flags: {},
  async run({ flags, client, io }) {
    const [accessor] = positionals(flags, 1, 1, "a token's accessor ID");
    await client.request("DELETE", `/v1/acl/token/${encodeURIComponent(accessor!)}`);
    io.print(`Token ${accessor} successfully deleted`);
    return 0;
  },
};
