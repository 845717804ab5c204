/**
 * Runs a drover CLI command in-process as `drover <argv...>` would, with only
 * the environment given (no -address), and returns what a user sees.
 */
import { aclCommand } from "../../src/cli/acl/index.ts";
import { allocCommand } from "../../src/cli/alloc/index.ts";
import type { Io } from "../../src/cli/command.ts";
import { deploymentCommand } from "../../src/cli/deployment/index.ts";
import { runTopLevel, TOP_LEVEL } from "../../src/cli/entries.ts";
import { evalCommand } from "../../src/cli/eval/index.ts";
import { jobCommand } from "../../src/cli/job/index.ts";
import { namespaceCommand } from "../../src/cli/namespace/index.ts";
import { nodeCommand } from "../../src/cli/node/index.ts";
import { varCommand } from "../../src/cli/var/index.ts";
import { captureIo } from "./harness.ts";

const GROUPS: Record<string, (argv: readonly string[], io: Io) => Promise<number>> = {
  job: jobCommand,
  alloc: allocCommand,
  node: nodeCommand,
  eval: evalCommand,
  deployment: deploymentCommand,
  namespace: namespaceCommand,
  var: varCommand,
  acl: aclCommand,
};

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

export async function drover(argv: readonly string[], env: Record<string, string | undefined>): Promise<CliResult> {
  const [name, ...rest] = argv;
  const io = captureIo(env);
  const group = GROUPS[name!];
  if (!group && !(name! in TOP_LEVEL)) throw new Error(`no drover command "${name}"`);
  const code = group ? await group(rest, io) : await runTopLevel(name!, rest, io);
  return { code, out: io.out, err: io.err };
}
