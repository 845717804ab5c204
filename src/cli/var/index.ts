/**
 * `drover var get|put|list|purge`: Nomad 1.x Variables, against the
 * agent's /v1/var/:path and /v1/vars (Nomad 1.6's API shapes):
 *
 *   get    GET    /v1/var/:path
 *   put    PUT    /v1/var/:path[?cas=<modify index>]   {Namespace, Path, Items}
 *   list   GET    /v1/vars[?prefix=]
 *   purge  DELETE /v1/var/:path[?cas=]
 *
 * A check-and-set conflict is answered 409 with the variable as it is.
 */
import { readFileSync } from "node:fs";
import { ADDRESS_USAGE, dispatch, positionals, processIo, type Io, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { formatKV, formatList, formatNanos } from "../format.ts";
import { AgentError, type AgentClient } from "../http-client.ts";
import { renderTemplate } from "../template.ts";

interface VariableMetadata {
  Namespace: string;
  Path: string;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
}

interface Variable extends VariableMetadata {
  Items: Record<string, string>;
}

const OUT_FORMATS = ["go-template", "hcl", "json", "none", "table"];
const HTTP_CONFLICT = 409;
const HTTP_NOT_FOUND = 404;

/** Nomad strips a path's leading and trailing slashes. */
const cleanPath = (path: string) => path.replace(/^\/+|\/+$/g, "");
const varUrl = (path: string) => `/v1/var/${cleanPath(path).split("/").map(encodeURIComponent).join("/")}`;

function outFormat(flags: { strings: Record<string, string> }, fallback: string, formats = OUT_FORMATS): string {
  const format = flags.strings.out ?? fallback;
  if (!formats.includes(format)) throw new UsageError(`Invalid value for "-out"; valid values are [${formats.join(", ")}]`);
  if (format !== "go-template" && flags.strings.template !== undefined) throw new UsageError("The '-template' flag is only valid when using 'go-template' formatting");
  if (format === "go-template" && flags.strings.template === undefined) throw new UsageError("A template must be supplied using '-template' when using go-template formatting");
  return format;
}

function asTable(variable: Variable): string {
  const pairs: [string, string][] = [
    ["Namespace", variable.Namespace],
    ["Path", variable.Path],
    ["Create Time", formatNanos(variable.CreateTime)],
  ];
  if (variable.CreateTime !== variable.ModifyTime) pairs.push(["Modify Time", formatNanos(variable.ModifyTime)]);
  pairs.push(["Check Index", String(variable.ModifyIndex)]);
  const items = Object.entries(variable.Items ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  return `${formatKV(pairs)}\n\nItems\n${formatKV(items)}`;
}

function asHcl(variable: Variable): string {
  const items = Object.entries(variable.Items ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  const width = Math.max(0, ...items.map(([key]) => key.length));
  return `namespace    = ${JSON.stringify(variable.Namespace)}
path         = ${JSON.stringify(variable.Path)}
create_index = ${variable.CreateIndex}  # Set by server
modify_index = ${variable.ModifyIndex}  # Set by server; consulted for check-and-set
create_time  = ${variable.CreateTime}   # Set by server
modify_time  = ${variable.ModifyTime}   # Set by server

items = {
${items.map(([key, value]) => `  ${key.padStart(width)} = ${JSON.stringify(value)}`).join("\n")}
}`;
}

function render(io: Io, variable: Variable, format: string, template: string | undefined): void {
  if (format === "json") io.print(JSON.stringify(variable, null, 2));
  else if (format === "hcl") io.print(asHcl(variable));
  else if (format === "go-template") io.print(renderTemplate(template!, variable));
  else if (format === "table") io.print(asTable(variable));
}

async function readVariable(client: AgentClient, path: string): Promise<Variable | undefined> {
  try {
    return (await client.get<Variable>(varUrl(path))).body;
  } catch (err) {
    if (err instanceof AgentError && err.status === HTTP_NOT_FOUND) return undefined;
    throw err;
  }
}

const OUT_USAGE = `  -out <format>       go-template, hcl, json, none or table.
  -template <tmpl>    The Go template for -out go-template.`;

const varGet: Subcommand = {
  summary: "Read a variable",
  usage: `Usage: drover var get [options] <path>

Options:
${ADDRESS_USAGE}
  -item <key>         Print only this item's value, without a newline.
${OUT_USAGE} (default table)`,
  flags: { strings: ["item", "out", "template"] },
  async run({ flags, client, io }) {
    const [path] = positionals(flags, 1, 1, "one variable path");
    const format = outFormat(flags, "table");
    const variable = await readVariable(client, path!);
    if (!variable) {
      io.error("Variable not found");
      return 1;
    }
    const item = flags.strings.item;
    if (item !== undefined) {
      const value = variable.Items?.[item];
      if (value === undefined) throw new UsageError(`Variable does not contain "${item}" item`);
      io.write(value);
      return 0;
    }
    render(io, variable, format, flags.strings.template);
    return 0;
  },
};

/** `key=value` items; `key=@file` reads the value from a file, `key=` removes the key. */
function parseItems(args: readonly string[]): Record<string, string | null> {
  const items: Record<string, string | null> = {};
  for (const arg of args) {
    const at = arg.indexOf("=");
    if (at <= 0) throw new UsageError(`Failed to parse K=V data: "${arg}" is not key=value`);
    const key = arg.slice(0, at);
    const raw = arg.slice(at + 1);
    items[key] = raw === "" ? null : raw.startsWith("@") ? readFileSync(raw.slice(1), "utf8") : raw;
  }
  return items;
}

function varSpec(source: string): Partial<Variable> {
  const text = readFileSync(source === "-" ? 0 : source.slice(1), "utf8");
  try {
    return JSON.parse(text) as Partial<Variable>;
  } catch (err) {
    throw new UsageError(`Failed to parse variable data: ${(err as Error).message} (drover reads variable specifications as JSON)`);
  }
}

const varPut: Subcommand = {
  summary: "Create or update a variable",
  usage: `Usage: drover var put [options] <path> [<key>=<value>]...

  Writes the variable's items. "key=@file" reads a value from a file,
  "key=" removes the key; a path of "-" or "@file" as the only argument
  reads a whole JSON specification. Without -force, an existing variable
  is updated only if nobody changed it since it was read (check-and-set).

Options:
${ADDRESS_USAGE}
  -check-index <n>    Write only if the variable's modify index is n (0: only if new).
  -force              Write whatever the variable's index.
${OUT_USAGE} (default none: one line saying what was written)`,
  flags: { booleans: ["force"], strings: ["check-index", "out", "template"] },
  async run({ flags, client, io }) {
    const [first, ...rest] = positionals(flags, 1, Number.MAX_SAFE_INTEGER, "a variable path and items");
    const format = outFormat(flags, "none");
    const checkText = flags.strings["check-index"];
    if (checkText !== undefined && !/^\d+$/.test(checkText)) throw new UsageError(`Error parsing check-index value "${checkText}"`);
    const spec = first === "-" || first!.startsWith("@") ? varSpec(first!) : undefined;
    const path = spec?.Path ?? first!;
    const existing = await readVariable(client, path);
    const items: Record<string, string> = { ...(existing?.Items ?? {}), ...(spec?.Items ?? {}) };
    for (const [key, value] of Object.entries(parseItems(rest))) {
      if (value === null) delete items[key];
      else items[key] = value;
    }
    if (Object.keys(items).length === 0) throw new UsageError("Must supply data");
    const cas = flags.booleans.force ? undefined : (checkText ?? String(existing?.ModifyIndex ?? 0));
    let written: Variable;
    try {
      written = await client.write<Variable>("PUT", varUrl(path), { ...(existing ? { Namespace: existing.Namespace } : {}), Path: cleanPath(path), Items: items }, { cas });
    } catch (err) {
      if (err instanceof AgentError && err.status === HTTP_CONFLICT) {
        io.error(`Check-and-Set conflict: the variable's modify index is not ${cas}. Read it again, or write with -force.`);
        return 1;
      }
      throw err;
    }
    if (format === "none") io.print(`Created variable "${written.Path}" with modify index ${written.ModifyIndex}`);
    else render(io, written, format, flags.strings.template);
    return 0;
  },
};

const varList: Subcommand = {
  summary: "List variable metadata",
  usage: `Usage: drover var list [options] [<prefix>]

Options:
${ADDRESS_USAGE}
  -out <format>       go-template, json, table or terse (paths only).
  -template <tmpl>    The Go template for -out go-template.
  -json               Same as -out json.
  -t <tmpl>           Same as -out go-template -template <tmpl>.`,
  flags: { booleans: ["json"], strings: ["out", "template", "t", "per-page", "filter"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 0, 1, "at most one path prefix");
    const template = flags.strings.t ?? flags.strings.template;
    const implied = flags.booleans.json ? "json" : flags.strings.t !== undefined ? "go-template" : "table";
    const format = outFormat({ strings: { ...flags.strings, ...(template !== undefined ? { template } : {}) } }, implied, ["go-template", "json", "table", "terse"]);
    const { body } = await client.get<VariableMetadata[]>("/v1/vars", { prefix, filter: flags.strings.filter, per_page: flags.strings["per-page"] });
    const vars = [...body].sort((a, b) => (a.Namespace === b.Namespace ? (a.Path < b.Path ? -1 : 1) : a.Namespace < b.Namespace ? -1 : 1));
    if (format === "json") io.print(JSON.stringify(vars, null, 4));
    else if (format === "go-template") io.print(renderTemplate(template!, vars));
    else if (format === "terse") io.print(vars.map((v) => v.Path).join("\n"));
    else if (vars.length === 0) io.print("No matching variables found");
    else io.print(formatList([["Namespace", "Path", "Last Updated"], ...vars.map((v) => [v.Namespace, v.Path, formatNanos(v.ModifyTime)])]));
    return 0;
  },
};

const varPurge: Subcommand = {
  summary: "Purge a variable",
  usage: `Usage: drover var purge [options] <path>

Options:
${ADDRESS_USAGE}
  -check-index <n>    Purge only if the variable's modify index is n.`,
  flags: { strings: ["check-index"] },
  async run({ flags, client, io }) {
    const [path] = positionals(flags, 1, 1, "one variable path");
    const checkText = flags.strings["check-index"];
    if (checkText !== undefined && !/^\d+$/.test(checkText)) throw new UsageError(`Invalid -check-index value "${checkText}": not parsable as uint64`);
    try {
      await client.request("DELETE", varUrl(path!), { query: { cas: checkText } });
    } catch (err) {
      if (err instanceof AgentError && err.status === HTTP_CONFLICT) {
        io.error(`Check-and-Set conflict: the variable's modify index is not ${checkText}.`);
        return 1;
      }
      throw err;
    }
    io.print(`Successfully purged variable "${cleanPath(path!)}"!`);
    return 0;
  },
};

export const VAR_SUBCOMMANDS = { get: varGet, list: varList, purge: varPurge, put: varPut };

export function varCommand(argv: readonly string[], io: Io = processIo()): Promise<number> {
  return dispatch("var", VAR_SUBCOMMANDS, argv, io);
}
