/**
 * drover's single entry point: argv -> a user command or an internal role.
 * Each is imported only when chosen, so a per-task helper process loads none
 * of the agent's code (HTTP, ORM, logging).
 */
import { takeRoleHandshake } from "./runtime/self.ts";
import { hclWasmGzPath } from "./runtime/embedded.ts";
import { useHclWasm } from "./lib/hcl-wasm.ts";
import { versionLine } from "./lib/version.ts";

type Main = (argv: readonly string[]) => Promise<number>;

interface Command {
  summary: string;
  load: () => Promise<Main>;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  agent: { summary: "Run the agent on this host", load: async () => (await import("./cli/agent.ts")).agentCommand },
  job: { summary: "Run, inspect and stop jobs", load: async () => (await import("./cli/job/index.ts")).jobCommand },
  alloc: { summary: "Inspect and act on allocations (status, logs, stop, restart, signal)", load: async () => (await import("./cli/alloc/index.ts")).allocCommand },
  node: { summary: "Show the nodes", load: async () => (await import("./cli/node/index.ts")).nodeCommand },
  acl: { summary: "Bootstrap ACLs, manage policies and tokens", load: async () => (await import("./cli/acl/index.ts")).aclCommand },
  version: { summary: "Print the version", load: async () => async () => (console.log(versionLine()), 0) },
};

/** Roles drover starts itself; each refuses to run without the parent's handshake. */
const INTERNAL_ROLES: Readonly<Record<string, { purpose: string; load: () => Promise<Main> }>> = {
  executor: { purpose: "supervises one task", load: async () => (await import("./executor/main.ts")).main },
  logmon: { purpose: "writes every task's logs to rotated files", load: async () => (await import("./logmon/main.ts")).main },
  nsenter: { purpose: "builds an exec task's isolation, then becomes the task", load: async () => (await import("./nsenter/main.ts")).main },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(10)} ${command.summary}`);
  return `Usage: drover <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun "drover <command> -h" for a command's options.`;
}

/** Error classes whose message is meant for the operator as it stands. */
const OPERATOR_ERRORS = new Set(["ConfigError", "StateDbError", "UsageError", "ValidationError", "HclSyntaxError", "AgentError"]);

/**
 * An error that nothing awaited (a rejected promise no one handles, a throw
 * in a callback) ends the command with one line and exit 1. Bun's default
 * prints it and carries on, which leaves a command waiting forever for a
 * result that will never come.
 */
function endOnStrayErrors(name: string): void {
  const end = (err: unknown) => {
    const error = err instanceof Error ? err : new Error(String(err));
    console.error(`drover ${name}: internal error: ${process.env.DROVER_DEBUG === undefined ? error.message : error.stack}`);
    process.exit(1);
  };
  process.on("unhandledRejection", end);
  process.on("uncaughtException", end);
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    console.log(usage());
    return name === undefined ? 1 : 0;
  }
  if (name === "-v" || name === "--version" || name === "-version") return COMMANDS.version!.load().then((run) => run([]));

  const role = INTERNAL_ROLES[name];
  if (role) {
    if (!takeRoleHandshake()) {
      console.error(`drover ${name} is an internal role (${role.purpose}); the agent starts it. Run "drover agent" instead.`);
      return 1;
    }
    return (await role.load())(rest);
  }

  const command = COMMANDS[name];
  if (!command) {
    console.error(`drover: unknown command "${name}"\n\n${usage()}`);
    return 1;
  }
  endOnStrayErrors(name);
  // Commands may read HCL (job files, configs): its parser is in the executable when compiled.
  if (hclWasmGzPath) useHclWasm(hclWasmGzPath);
  try {
    return await (await command.load())(rest);
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    const detail = OPERATOR_ERRORS.has(error.name) || process.env.DROVER_DEBUG === undefined ? error.message : error.stack;
    console.error(`drover ${name}: ${detail}`);
    return 1;
  }
}

process.exit(await main(process.argv.slice(2)));
