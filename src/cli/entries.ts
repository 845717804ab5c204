/**
 * The top-level commands that are one command or a small group (`drover
 * status`, `drover operator raft list-peers`) and Nomad's short forms of
 * everyday commands (`drover run` = `drover job run`), by name.
 */
import { ALLOC_SUBCOMMANDS } from "./alloc/index.ts";
import { agentMonitor } from "./cluster/agent-monitor.ts";
import { agentInfo } from "./cluster/agent-info.ts";
import { operatorGroup } from "./cluster/operator.ts";
import { serverGroup } from "./cluster/server.ts";
import { systemGroup } from "./cluster/system.ts";
import { openUi } from "./cluster/ui.ts";
import { entryPoint, processIo, type Entry, type Io } from "./command.ts";
import { JOB_SUBCOMMANDS } from "./job/index.ts";
import { status } from "./status.ts";

export const TOP_LEVEL: Readonly<Record<string, Entry>> = {
  status,
  "agent-info": agentInfo,
  monitor: agentMonitor,
  server: serverGroup,
  system: systemGroup,
  operator: operatorGroup,
  ui: openUi,
  run: JOB_SUBCOMMANDS.run,
  plan: JOB_SUBCOMMANDS.plan,
  stop: JOB_SUBCOMMANDS.stop,
  validate: JOB_SUBCOMMANDS.validate,
  inspect: JOB_SUBCOMMANDS.inspect,
  init: JOB_SUBCOMMANDS.init,
  logs: ALLOC_SUBCOMMANDS.logs,
  exec: ALLOC_SUBCOMMANDS.exec,
};

/** Runs the top-level command `name` (one of TOP_LEVEL's). */
export function runTopLevel(name: string, argv: readonly string[], io: Io = processIo()): Promise<number> {
  const entry = TOP_LEVEL[name];
  if (!entry) throw new Error(`no top-level command "${name}"`);
  return entryPoint(name, entry)(argv, io);
}
