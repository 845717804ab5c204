/**
 * `drover acl <subcommand>`: bootstrap, and the `policy` and `token` groups,
 * as Nomad's `nomad acl` commands.
 */
import { dispatch, processIo, type Io } from "../command.ts";
import { aclBootstrap } from "./bootstrap.ts";
import { aclPolicyApply, aclPolicyDelete, aclPolicyInfo, aclPolicyList } from "./policy.ts";
import { aclTokenCreate, aclTokenDelete, aclTokenInfo, aclTokenList, aclTokenSelf } from "./token.ts";

export const ACL_POLICY_SUBCOMMANDS = { apply: aclPolicyApply, list: aclPolicyList, info: aclPolicyInfo, delete: aclPolicyDelete };
export const ACL_TOKEN_SUBCOMMANDS = { create: aclTokenCreate, list: aclTokenList, self: aclTokenSelf, info: aclTokenInfo, delete: aclTokenDelete };

const USAGE = `Usage: drover acl <subcommand> [options] [args]

Subcommands:
    bootstrap  ${aclBootstrap.summary}
    policy     Manage policies: apply, list, info, delete
    token      Manage tokens: create, list, self, info, delete

Run "drover acl <subcommand> -h" for a subcommand's options.`;

export function aclCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  const [group, ...rest] = argv;
  if (group === "policy") return dispatch("acl policy", ACL_POLICY_SUBCOMMANDS, rest, io);
  if (group === "token") return dispatch("acl token", ACL_TOKEN_SUBCOMMANDS, rest, io);
  if (group === "bootstrap") return dispatch("acl", { bootstrap: aclBootstrap }, argv, io);
  if (group === undefined || group === "-h" || group === "-help" || group === "--help") {
    io.print(USAGE);
    return Promise.resolve(group === undefined ? 1 : 0);
  }
  io.error(`drover acl: unknown subcommand "${group}"\n\n${USAGE}`);
  return Promise.resolve(1);
}
