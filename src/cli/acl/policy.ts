/** `drover acl policy apply|list|info|delete`: ACL policies, in Nomad's rule language. */
import { readFileSync } from "node:fs";
import type { AclPolicy, AclPolicyStub } from "../../acl/structs.ts";
import { UsageError } from "../flags.ts";
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, positionals, printData, printList, type Subcommand } from "../command.ts";
import { formatKV, orNone } from "../format.ts";

export const aclPolicyApply: Subcommand = {
  summary: "Create or update a policy from a rules file",
  usage: `Usage: drover acl policy apply [options] <name> <path>

  Writes the policy <name> with the rules in <path> (HCL or JSON; "-" reads
  stdin). The agent checks the rules and names any problem.

Options:
${ADDRESS_USAGE}
  -description <text>   What the policy is for.`,
  flags: { strings: ["description"] },
  async run({ flags, client, io }) {
    const [name, path] = positionals(flags, 2, 2, "a policy name and a rules file");
    let rules: string;
    try {
      rules = readFileSync(path === "-" ? 0 : path!, "utf8");
    } catch (err) {
      throw new UsageError(`cannot read the rules file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    await client.request("PUT", `/v1/acl/policy/${encodeURIComponent(name!)}`, { body: { Name: name, Description: flags.strings.description ?? "", Rules: rules } });
    io.print(`Successfully wrote "${name}" ACL policy!`);
    return 0;
  },
};

export const aclPolicyList: Subcommand = {
  summary: "List policies",
  usage: `Usage: drover acl policy list [options]

  Lists the policies (a client token sees its own).

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: DATA_FLAGS,
  async run({ flags, client, io }) {
    positionals(flags, 0, 0, "no arguments");
    const { body } = await client.get<AclPolicyStub[]>("/v1/acl/policies");
    printList(io, flags, body, "No policies found", ["Name", "Description"], (policy) => [policy.Name, orNone(policy.Description)]);
    return 0;
  },
};

export const aclPolicyInfo: Subcommand = {
  summary: "Show a policy and its rules",
  usage: `Usage: drover acl policy info [options] <name>

Options:
${ADDRESS_USAGE}
${DATA_USAGE}`,
  flags: DATA_FLAGS,
  async run({ flags, client, io }) {
    const [name] = positionals(flags, 1, 1, "a policy name");
    const { body: policy } = await client.get<AclPolicy>(`/v1/acl/policy/${encodeURIComponent(name!)}`);
    if (printData(io, flags, policy)) return 0;
    io.print(
      formatKV([
        ["Name", policy.Name],
        ["Description", orNone(policy.Description)],
        ["Rules", policy.Rules],
        ["Create Index", String(policy.CreateIndex)],
        ["Modify Index", String(policy.ModifyIndex)],
      ]),
    );
    return 0;
  },
};

export const aclPolicyDelete: Subcommand = {
  summary: "Delete a policy",
  usage: `Usage: drover acl policy delete [options] <name>

  Tokens that name the policy lose what it granted at once.

Options:
${ADDRESS_USAGE}`,
  flags: {},
  async run({ flags, client, io }) {
    const [name] = positionals(flags, 1, 1, "a policy name");
    await client.request("DELETE", `/v1/acl/policy/${encodeURIComponent(name!)}`);
    io.print(`Successfully deleted ${name} policy!`);
    return 0;
  },
};
