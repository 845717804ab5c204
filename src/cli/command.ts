/**
 * The shape every API command (`job`, `alloc`, `node`) shares: a group of
 * subcommands, each with its usage, its flags (plus -address) and a run
 * function that writes to an Io, so tests can run them in-process. An error
 * meant for the operator (agent unreachable, an API error, a bad job file,
 * bad flags) is printed as `drover <group> <sub>: <message>` with exit 1.
 */
import { HclSyntaxError } from "../lib/hcl.ts";
import { ValidationError } from "../lib/validation.ts";
import { parseFlags, UsageError, wantsHelp, type FlagSpec, type ParsedFlags } from "./flags.ts";
import { formatList } from "./format.ts";
import { suggestion } from "./suggest.ts";
import { renderTemplate } from "./template.ts";
import { writeStdout } from "./stdout.ts";
import { AgentClient, AgentError, AgentUnreachableError, ClientConfigError } from "./http-client.ts";
import { AmbiguousPrefixError } from "./prefix.ts";

export interface Io {
  /** One line of output. */
  print(line: string): void;
  /** Raw bytes to stdout (log streams). */
  write(chunk: string | Uint8Array): void;
  /** One line to stderr. */
  error(line: string): void;
  env: Readonly<Record<string, string | undefined>>;
}

export function processIo(): Io {
  return {
    print: (line) => writeStdout(`${line}\n`),
    write: writeStdout,
    error: (line) => process.stderr.write(`${line}\n`),
    env: process.env,
  };
}

export interface Subcommand {
  summary: string;
  usage: string;
  flags: FlagSpec;
  run(args: CommandArgs): Promise<number>;
  /** The exit code of an error (Nomad's `job plan` uses 255); 1 unless given. */
  errorExitCode?: number;
}

/** A group of subcommands under one name (`job periodic`, `operator raft`). */
export interface SubcommandGroup {
  summary: string;
  subcommands: Readonly<Record<string, Subcommand | SubcommandGroup>>;
}

export type Entry = Subcommand | SubcommandGroup;

export const isGroup = (entry: Entry): entry is SubcommandGroup => "subcommands" in entry;

export interface CommandArgs {
  flags: ParsedFlags;
  client: AgentClient;
  io: Io;
}

/** Nomad's global flags, on every subcommand: where the agent is, the ACL token, TLS. */
const CONNECTION_STRINGS = ["address", "token", "region", "namespace", "ca-cert", "client-cert", "client-key", "tls-server-name"] as const;
const CONNECTION_BOOLEANS = ["tls-skip-verify"] as const;
export const CONNECTION_FLAGS: readonly string[] = [...CONNECTION_STRINGS, ...CONNECTION_BOOLEANS];

export const ADDRESS_USAGE = `  -address <addr>    The agent's HTTP API (default $DROVER_ADDR, $NOMAD_ADDR or
                     http://127.0.0.1:4646; https://... with TLS).
  -token <secret>    ACL token (default $DROVER_TOKEN or $NOMAD_TOKEN).
  -region <name>     Region to send requests to (default $NOMAD_REGION).
  -namespace <name>  Namespace of jobs and allocations (default $NOMAD_NAMESPACE).
  -ca-cert <path>    CA certificate that signed the agent's (default $DROVER_CACERT or $NOMAD_CACERT).
  -client-cert <path>, -client-key <path>
                     Certificate to present when the agent verifies clients
                     (default $DROVER_CLIENT_CERT / $NOMAD_CLIENT_CERT and *_CLIENT_KEY).
  -tls-server-name <name>
                     Name to verify the agent's certificate against (default $NOMAD_TLS_SERVER_NAME).
  -tls-skip-verify   Do not verify the agent's certificate (default $NOMAD_SKIP_VERIFY).`;

/** The agent client the connection flags (or the environment) describe. */
export function clientFromFlags(flags: ParsedFlags, env: Io["env"]): AgentClient {
  return AgentClient.resolve(
    {
      address: flags.strings.address,
      token: flags.strings.token,
      caCert: flags.strings["ca-cert"],
      clientCert: flags.strings["client-cert"],
      clientKey: flags.strings["client-key"],
      tlsServerName: flags.strings["tls-server-name"],
      region: flags.strings.region,
      namespace: flags.strings.namespace,
      ...("tls-skip-verify" in flags.booleans ? { tlsSkipVerify: flags.booleans["tls-skip-verify"] } : {}),
    },
    env,
  );
}

/** The output flags of the status commands. */
export const OUTPUT_FLAGS = { booleans: ["json", "verbose"], strings: ["t"] } as const;
export const OUTPUT_USAGE = `  -json          JSON for scripts.
  -t <template>  Format the answer with a Go template.
  -verbose       Full IDs.`;

const OPERATOR_ERRORS = [AgentError, AgentUnreachableError, ClientConfigError, AmbiguousPrefixError, UsageError, ValidationError, HclSyntaxError];

function groupUsage(group: string, subcommands: Readonly<Record<string, Entry>>): string {
  const width = Math.max(10, ...Object.keys(subcommands).map((name) => name.length));
  const lines = Object.entries(subcommands).map(([name, sub]) => `    ${name.padEnd(width)} ${sub.summary}`);
  return `Usage: drover ${group} <subcommand> [options] [args]\n\nSubcommands:\n${lines.join("\n")}\n\nRun "drover ${group} <subcommand> -h" for a subcommand's options.`;
}

export async function dispatch(group: string, subcommands: Readonly<Record<string, Entry>>, argv: readonly string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "-h" || name === "-help" || name === "--help") {
    io.print(groupUsage(group, subcommands));
    return name === undefined ? 1 : 0;
  }
  const sub = subcommands[name];
  if (!sub) {
    io.error(`drover ${group}: unknown subcommand "${name}".${suggestion(name, Object.keys(subcommands))}\n\n${groupUsage(group, subcommands)}`);
    return 1;
  }
  if (isGroup(sub)) return dispatch(`${group} ${name}`, sub.subcommands, rest, io);
  return runSubcommand(`${group} ${name}`, sub, rest, io);
}

/** A top-level command (`drover status`, `drover operator`) as main's entry point. */
export function entryPoint(name: string, entry: Entry): (argv: readonly string[], io?: Io) => Promise<number> {
  return (argv, io = processIo()) => (isGroup(entry) ? dispatch(name, entry.subcommands, argv, io) : runSubcommand(name, entry, argv, io));
}

/** Runs one command (`drover <label> ...`): its flags and the connection's, then its run; operator errors print one line. */
export async function runSubcommand(label: string, sub: Subcommand, argv: readonly string[], io: Io): Promise<number> {
  if (wantsHelp(argv)) {
    io.print(sub.usage);
    return 0;
  }
  try {
    const spec = sub.flags;
    const flags = parseFlags(argv, {
      ...spec,
      strings: [...(spec.strings ?? []), ...CONNECTION_STRINGS],
      booleans: [...(spec.booleans ?? []), ...CONNECTION_BOOLEANS],
    });
    const client = clientFromFlags(flags, io.env);
    return await sub.run({ flags, client, io });
  } catch (err) {
    if (!OPERATOR_ERRORS.some((kind) => err instanceof kind)) throw err;
    // Several problems with one input read better one per line.
    const message =
      err instanceof ValidationError && err.problems.length > 1 ? `${err.problems.length} problems:\n  ${err.lines().join("\n  ")}` : (err as Error).message;
    io.error(`drover ${label}: ${message}`);
    if (err instanceof UsageError) io.error(`\n${sub.usage}`);
    return sub.errorExitCode ?? 1;
  }
}

/** The positional arguments, or a UsageError when there are not `min`..`max` of them. */
export function positionals(flags: ParsedFlags, min: number, max: number, names: string): string[] {
  const args = flags.positionals;
  if (args.length < min || args.length > max) throw new UsageError(`expected ${names}, got ${args.length} argument(s)`);
  return args;
}

/** `-json` and `-t <template>`: Nomad's two forms of output for scripts. */
export const DATA_FLAGS = { booleans: ["json"], strings: ["t"] } as const;
export const DATA_USAGE = `  -json          JSON for scripts.
  -t <template>  Format the answer with a Go template, e.g. -t '{{range .}}{{.ID}}{{end}}'.`;

/** The flags of `base` and `extra` together (a command's own flags plus DATA_FLAGS, say). */
export function withFlags(base: FlagSpec, extra: FlagSpec): FlagSpec {
  return {
    ...base,
    booleans: [...(base.booleans ?? []), ...(extra.booleans ?? [])],
    strings: [...(base.strings ?? []), ...(extra.strings ?? [])],
    repeated: [...(base.repeated ?? []), ...(extra.repeated ?? [])],
  };
}

/**
 * Prints `data` as -json or -t asks (Nomad's Format: JSON indented four
 * spaces, or the template's text) and says whether it did; false leaves the
 * human form to the caller.
 */
export function printData(io: Io, flags: ParsedFlags, data: unknown): boolean {
  const template = flags.strings.t;
  if (flags.booleans.json && template !== undefined) throw new UsageError("Both json and template formatting are not allowed");
  if (flags.booleans.json) io.print(JSON.stringify(data, null, 4));
  else if (template !== undefined) io.print(renderTemplate(template, data));
  else return false;
  return true;
}

/** A list command's output: -json/-t as asked, `empty` when there is nothing, else a table of `header` and one row per item. */
export function printList<T>(io: Io, flags: ParsedFlags, items: readonly T[], empty: string, header: string[], row: (item: T) => string[]): void {
  if (printData(io, flags, items)) return;
  if (items.length === 0) io.print(empty);
  else io.print(formatList([header, ...items.map(row)]));
}
