/**
 * docs/cli.md's table of which commands take `-json` and the commands' own
 * flags are the same list, so neither can promise what the other lacks.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ACL_POLICY_SUBCOMMANDS, ACL_TOKEN_SUBCOMMANDS } from "../../src/cli/acl/index.ts";
import { ALLOC_SUBCOMMANDS } from "../../src/cli/alloc/index.ts";
import type { Entry } from "../../src/cli/command.ts";
import { DEPLOYMENT_SUBCOMMANDS } from "../../src/cli/deployment/index.ts";
import { TOP_LEVEL } from "../../src/cli/entries.ts";
import { EVAL_SUBCOMMANDS } from "../../src/cli/eval/index.ts";
import { JOB_SUBCOMMANDS } from "../../src/cli/job/index.ts";
import { NAMESPACE_SUBCOMMANDS } from "../../src/cli/namespace/index.ts";
import { NODE_SUBCOMMANDS } from "../../src/cli/node/index.ts";
import { VAR_SUBCOMMANDS } from "../../src/cli/var/index.ts";
import { REPO } from "../helpers/binary.ts";

const GROUPS: Record<string, Entry> = {
  ...TOP_LEVEL,
  job: { summary: "", subcommands: JOB_SUBCOMMANDS },
  alloc: { summary: "", subcommands: ALLOC_SUBCOMMANDS },
  node: { summary: "", subcommands: NODE_SUBCOMMANDS },
  eval: { summary: "", subcommands: EVAL_SUBCOMMANDS },
  deployment: { summary: "", subcommands: DEPLOYMENT_SUBCOMMANDS },
  namespace: { summary: "", subcommands: NAMESPACE_SUBCOMMANDS },
  var: { summary: "", subcommands: VAR_SUBCOMMANDS },
  "acl policy": { summary: "", subcommands: ACL_POLICY_SUBCOMMANDS },
  "acl token": { summary: "", subcommands: ACL_TOKEN_SUBCOMMANDS },
};

/** Every command that takes -json, by its full name; Nomad's short forms (`run`) are left to their long ones. */
function takingJson(prefix: string, entries: Record<string, Entry>): { name: string; usage: string }[] {
  return Object.entries(entries).flatMap(([name, entry]) => {
    const full = prefix ? `${prefix} ${name}` : name;
    if ("subcommands" in entry) return takingJson(full, entry.subcommands);
    if (!prefix && Object.values(JOB_SUBCOMMANDS).concat(Object.values(ALLOC_SUBCOMMANDS)).includes(entry as never)) return [];
    return entry.flags.booleans?.includes("json") ? [{ name: full, usage: entry.usage }] : [];
  });
}

/** The commands in docs/cli.md's `| command | \`-json\` |` table. */
function documentedJsonCommands(): string[] {
  const doc = readFileSync(join(REPO, "docs/cli.md"), "utf8");
  const table = doc.split("| command | `-json` |")[1];
  if (table === undefined) throw new Error("docs/cli.md has no `-json` table");
  const commands: string[] = [];
  for (const row of table.split("\n").slice(2)) {
    const match = /^\| `([a-z -]+)` \|/.exec(row);
    if (!match) break;
    commands.push(match[1]!);
  }
  return commands;
}

describe("-json", () => {
  test("the commands that take it are exactly those docs/cli.md lists, and their usage says so", () => {
    const taking = takingJson("", GROUPS);
    expect(documentedJsonCommands().sort()).toEqual(taking.map(({ name }) => name).sort());
    for (const { usage } of taking) expect(usage).toContain("-json");
  });
});
