/**
 * Shell completion: `drover completion bash|zsh|fish` prints the line that
 * makes the shell ask drover itself (`drover __complete`) for the words
 * that may come next: commands, subcommands, and a command's flags.
 */
import { ACL_POLICY_SUBCOMMANDS, ACL_TOKEN_SUBCOMMANDS } from "./acl/index.ts";
import { ALLOC_SUBCOMMANDS } from "./alloc/index.ts";
import { CONNECTION_FLAGS, isGroup, type Entry } from "./command.ts";
import { DEPLOYMENT_SUBCOMMANDS } from "./deployment/index.ts";
import { TOP_LEVEL } from "./entries.ts";
import { EVAL_SUBCOMMANDS } from "./eval/index.ts";
import { UsageError } from "./flags.ts";
import { JOB_SUBCOMMANDS } from "./job/index.ts";
import { NAMESPACE_SUBCOMMANDS } from "./namespace/index.ts";
import { NODE_SUBCOMMANDS } from "./node/index.ts";
import { VAR_SUBCOMMANDS } from "./var/index.ts";

const group = (subcommands: Record<string, Entry>): Entry => ({ summary: "", subcommands });

/** Every command with subcommands or flags, by the name typed after `drover`. */
const TREE: Readonly<Record<string, Entry>> = {
  ...TOP_LEVEL,
  job: group(JOB_SUBCOMMANDS),
  alloc: group(ALLOC_SUBCOMMANDS),
  node: group(NODE_SUBCOMMANDS),
  eval: group(EVAL_SUBCOMMANDS),
  deployment: group(DEPLOYMENT_SUBCOMMANDS),
  namespace: group(NAMESPACE_SUBCOMMANDS),
  var: group(VAR_SUBCOMMANDS),
  acl: group({ policy: group(ACL_POLICY_SUBCOMMANDS), token: group(ACL_TOKEN_SUBCOMMANDS) }),
};

/** The words that may replace the last of `words` (the command line after "drover", the last word being typed). */
export function completions(commands: readonly string[], words: readonly string[]): string[] {
  const typed = words.at(-1) ?? "";
  let names: readonly string[] = commands;
  let entry: Entry | undefined;
  for (const word of words.slice(0, -1)) {
    if (word.startsWith("-")) continue;
    // Past a command's name come its arguments: only its flags complete.
    if (entry !== undefined && !isGroup(entry)) break;
    const next: Entry | undefined = entry === undefined ? TREE[word] : isGroup(entry) ? entry.subcommands[word] : undefined;
    // A word drover does not know (an argument, a typo): nothing sensible follows it.
    if (next === undefined) return [];
    entry = next;
    names = isGroup(next) ? Object.keys(next.subcommands) : [];
  }
  if (typed.startsWith("-") && entry !== undefined && !isGroup(entry)) {
    const flags = [...(entry.flags.booleans ?? []), ...(entry.flags.strings ?? []), ...(entry.flags.repeated ?? []), ...CONNECTION_FLAGS];
    return flags.map((flag) => `-${flag}`).filter((flag) => flag.startsWith(typed)).sort();
  }
  return names.filter((name) => name.startsWith(typed)).sort();
}

/** The line each shell needs, calling back the drover at `binary`. */
export function completionScript(shell: string, binary: string): string {
  const quoted = `'${binary.replace(/'/g, "'\\''")}'`;
  if (shell === "bash") return `complete -o default -C "${quoted} __complete" drover`;
  if (shell === "zsh") return `autoload -U +X bashcompinit && bashcompinit\ncomplete -o default -C "${quoted} __complete" drover`;
  if (shell === "fish") return `complete -c drover -f -a "(${quoted} __complete --fish (commandline -cp))"`;
  throw new UsageError(`unknown shell "${shell}" (bash, zsh or fish)`);
}

/**
 * `drover __complete`, as the shells call it: bash and zsh give the line in
 * COMP_LINE (up to COMP_POINT); fish passes it after --fish.
 */
export function completeCommandLine(commands: readonly string[], argv: readonly string[], env: Readonly<Record<string, string | undefined>>): string[] {
  const line = argv[0] === "--fish" ? argv.slice(1).join(" ") : (env.COMP_LINE ?? "").slice(0, Number(env.COMP_POINT ?? env.COMP_LINE?.length ?? 0));
  const words = line.split(/\s+/);
  return completions(commands, words.slice(1));
}
