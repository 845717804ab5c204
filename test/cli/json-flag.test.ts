/**
 * The README's table of which commands take `-json` and the commands' own
 * flags are the same list, so neither can promise what the other lacks.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ALLOC_SUBCOMMANDS } from "../../src/cli/alloc/index.ts";
import type { Subcommand } from "../../src/cli/command.ts";
import { JOB_SUBCOMMANDS } from "../../src/cli/job/index.ts";
import { NODE_SUBCOMMANDS } from "../../src/cli/node/index.ts";
import { REPO } from "../helpers/binary.ts";

const GROUPS: Record<string, Readonly<Record<string, Subcommand>>> = { job: JOB_SUBCOMMANDS, alloc: ALLOC_SUBCOMMANDS, node: NODE_SUBCOMMANDS };

/** The commands in the README's `| command | \`-json\` |` table. */
function readmeJsonCommands(): string[] {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const table = readme.split("| command | `-json` |")[1];
  if (table === undefined) throw new Error("README.md has no `-json` table");
  const rows = table.split("\n").slice(2);
  const commands: string[] = [];
  for (const row of rows) {
    const match = /^\| `([a-z]+ [a-z]+)` \|/.exec(row);
    if (!match) break;
    commands.push(match[1]!);
  }
  return commands;
}

describe("-json", () => {
  test("the commands that take it are exactly those the README lists", () => {
    const taking = Object.entries(GROUPS).flatMap(([group, subcommands]) =>
      Object.entries(subcommands)
        .filter(([, sub]) => sub.flags.booleans?.includes("json"))
        .map(([name]) => `${group} ${name}`),
    );
    expect(readmeJsonCommands().sort()).toEqual(taking.sort());
    for (const command of taking) {
      const [group, name] = command.split(" ");
      expect(GROUPS[group!]![name!]!.usage).toContain("-json");
    }
  });
});
