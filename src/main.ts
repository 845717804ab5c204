/**
 * drover's single entry point: argv -> a user command or an internal role.
 * Each is imported only when chosen, so a per-task helper process loads none
 * of the agent's code (HTTP, ORM, logging).
 */
import { takeRoleHandshake } from "./runtime/self.ts";
import { hclWasmGzPath } from "./runtime/embedded.ts";
import { useHclWasm } from "./lib/hcl-wasm.ts";
import { versionLine } from "./lib/version.ts";
import { signalNumber } from "./lib/signals.ts";
import { stdoutWritten } from "./cli/stdout.ts";

type Main = (argv: readonly string[]) => Promise<number>;

interface Command {
  summary: string;
  load: () => Promise<Main>;
}

/** A command, loaded only when chosen. */
const cli = (summary: string, load: () => Promise<Main>): Command => ({ summary, load });
const topLevel = (name: string) => async (): Promise<Main> => {
  const { runTopLevel } = await import("./cli/entries.ts");
  return (argv) => runTopLevel(name, argv);
};

const COMMANDS: Readonly<Record<string, Command>> = {
  agent: cli("Run the agent on this host", async () => (await import("./cli/agent.ts")).agentCommand),
  job: cli("Run, plan, inspect, scale and stop jobs", async () => (await import("./cli/job/index.ts")).jobCommand),
  alloc: cli("Inspect and act on allocations (status, logs, fs, exec, stop, restart, signal)", async () => (await import("./cli/alloc/index.ts")).allocCommand),
  node: cli("Show nodes; drain them, set their eligibility", async () => (await import("./cli/node/index.ts")).nodeCommand),
  eval: cli("Show evaluations", async () => (await import("./cli/eval/index.ts")).evalCommand),
  deployment: cli("Show, promote, pause, resume and fail deployments", async () => (await import("./cli/deployment/index.ts")).deploymentCommand),
  namespace: cli("List, show, apply and delete namespaces", async () => (await import("./cli/namespace/index.ts")).namespaceCommand),
  var: cli("Read and write variables", async () => (await import("./cli/var/index.ts")).varCommand),
  acl: cli("Bootstrap ACLs, manage policies and tokens", async () => (await import("./cli/acl/index.ts")).aclCommand),
  status: cli("Show the status of a job, allocation, node, evaluation or deployment", topLevel("status")),
  "agent-info": cli("Show the agent's own status", topLevel("agent-info")),
  monitor: cli("Stream the agent's log", topLevel("monitor")),
  server: cli("Show the servers (server members)", topLevel("server")),
  system: cli("Run the server's garbage collection now", topLevel("system")),
  operator: cli("Raft peers and metrics", topLevel("operator")),
  ui: cli("Print the web UI's address", topLevel("ui")),
  // Nomad's short forms of everyday commands.
  run: cli("Same as job run", topLevel("run")),
  plan: cli("Same as job plan", topLevel("plan")),
  stop: cli("Same as job stop", topLevel("stop")),
  validate: cli("Same as job validate", topLevel("validate")),
  inspect: cli("Same as job inspect", topLevel("inspect")),
  init: cli("Same as job init", topLevel("init")),
  logs: cli("Same as alloc logs", topLevel("logs")),
  exec: cli("Same as alloc exec", topLevel("exec")),
  version: cli("Print the version", async () => async () => (console.log(versionLine()), 0)),
  completion: cli("Print the shell completion setup (bash, zsh, fish)", async () => {
    const { completionScript } = await import("./cli/completion.ts");
    return async ([shell = ""]) => (console.log(completionScript(shell, process.execPath)), 0);
  }),
};

/** Roles drover starts itself; each refuses to run without the parent's handshake. */
const INTERNAL_ROLES: Readonly<Record<string, { purpose: string; load: () => Promise<Main> }>> = {
  executor: { purpose: "supervises one task", load: async () => (await import("./executor/main.ts")).main },
  reaper: { purpose: "the parent of every executor: keeps the exit status of a dead executor's tasks", load: async () => (await import("./executor/host-reaper.ts")).main },
  logmon: { purpose: "writes every task's logs to rotated files", load: async () => (await import("./logmon/main.ts")).main },
  nsenter: { purpose: "builds an exec task's isolation, then becomes the task", load: async () => (await import("./nsenter/main.ts")).main },
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(12)} ${command.summary}`);
  return `Usage: drover <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun "drover <command> -h" for a command's options.`;
}

/** Error classes whose message is meant for the operator as it stands. */
const OPERATOR_ERRORS = new Set(["ConfigError", "StateDbError", "UsageError", "ValidationError", "HclSyntaxError", "AgentError"]);

/** What a shell reports for a process killed by SIGPIPE. */
const BROKEN_PIPE_EXIT = 128 + signalNumber("SIGPIPE");

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
  // A reader that went away (`drover job status | head -1`) is no error of
  // ours: end quietly with the status the shell gives a process killed by
  // SIGPIPE, as the compiled binary and Nomad's CLI do. The runtimes ignore
  // SIGPIPE, so the write's EPIPE is all a source run sees of it.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (err: NodeJS.ErrnoException) => (err.code === "EPIPE" ? process.exit(BROKEN_PIPE_EXIT) : end(err)));
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "-h" || name === "--help" || name === "help") {
    console.log(usage());
    return name === undefined ? 1 : 0;
  }
  if (name === "-v" || name === "--version" || name === "-version") return COMMANDS.version!.load().then((run) => run([]));
  if (name === "__complete") {
    const { completeCommandLine } = await import("./cli/completion.ts");
    for (const word of completeCommandLine(Object.keys(COMMANDS), rest, process.env)) console.log(word);
    return 0;
  }

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
    const { suggestion } = await import("./cli/suggest.ts");
    console.error(`drover: unknown command "${name}".${suggestion(name, Object.keys(COMMANDS))}\n\n${usage()}`);
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

const exitCode = await main(process.argv.slice(2));
await stdoutWritten();
process.exit(exitCode);
