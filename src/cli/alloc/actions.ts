/**
 * `drover alloc stop|restart|signal`: acting on a running allocation.
 *
 *   stop     POST /v1/allocation/:id/stop (server: stops it, places a replacement)
 *   restart  POST /v1/client/allocation/:id/restart {TaskName, AllTasks} (client)
 *   signal   POST /v1/client/allocation/:id/signal {Signal, Task} (client)
 */
import { isSignal } from "../../lib/signals.ts";
import type { AllocRestartRequest, AllocSignalRequest, AllocStopResponse } from "../../structs/api.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { monitorEvaluation } from "../monitor.ts";
import { chooseTask, fetchAlloc } from "./tasks.ts";

export const allocStop: Subcommand = {
  summary: "Stop an allocation (a replacement is placed)",
  usage: `Usage: drover alloc stop [options] <allocation>

  Stops the allocation; unless its job is stopped, a replacement is placed.

Options:
${ADDRESS_USAGE}
  -detach     Return once the stop is registered.
  -verbose    Full IDs.`,
  flags: { booleans: ["detach", "verbose"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one allocation ID");
    const alloc = await fetchAlloc(client, prefix!);
    const response = await client.write<AllocStopResponse>("POST", `/v1/allocation/${encodeURIComponent(alloc.ID)}/stop`);
    if (flags.booleans.detach) {
      io.print(response.EvalID);
      return 0;
    }
    await monitorEvaluation(client, io, response.EvalID, flags.booleans.verbose ?? false);
    return 0;
  },
};

export const allocRestart: Subcommand = {
  summary: "Restart a task, or every task, of an allocation",
  usage: `Usage: drover alloc restart [options] <allocation> [task]

  Restarts the task in place (it keeps its alloc dir). Without a task, every
  running task restarts; -all-tasks restarts every task, prestart and
  poststart tasks that finished included.

Options:
${ADDRESS_USAGE}
  -task <task>   The task, instead of the second argument.
  -all-tasks     Restart every task of the allocation.`,
  flags: { booleans: ["all-tasks"], strings: ["task"] },
  async run({ flags, client }) {
    const [prefix, taskArg] = positionals(flags, 1, 2, "an allocation ID and optionally a task");
    const all = flags.booleans["all-tasks"] ?? false;
    const given = flags.strings.task ?? taskArg;
    if (all && given !== undefined) throw new UsageError("-all-tasks cannot be combined with a task");
    const alloc = await fetchAlloc(client, prefix!);
    const request: AllocRestartRequest = { TaskName: given === undefined ? "" : chooseTask(alloc, given), AllTasks: all };
    await client.write("POST", `/v1/client/allocation/${encodeURIComponent(alloc.ID)}/restart`, request);
    return 0;
  },
};

export const allocSignal: Subcommand = {
  summary: "Send a signal to a task of an allocation",
  usage: `Usage: drover alloc signal [options] <allocation> [task]

  Sends the signal to the task (every task when the allocation has several
  and none is named).

Options:
${ADDRESS_USAGE}
  -s <signal>    The signal (default SIGKILL, as Nomad).
  -task <task>   The task, instead of the second argument.`,
  flags: { strings: ["s", "task"] },
  async run({ flags, client }) {
    const [prefix, taskArg] = positionals(flags, 1, 2, "an allocation ID and optionally a task");
    const signal = (flags.strings.s ?? "SIGKILL").toUpperCase();
    if (!isSignal(signal)) throw new UsageError(`unknown signal "${flags.strings.s}"`);
    const alloc = await fetchAlloc(client, prefix!);
    const given = flags.strings.task ?? taskArg;
    const request: AllocSignalRequest = { Signal: signal.startsWith("SIG") || /^\d+$/.test(signal) ? signal : `SIG${signal}`, Task: given === undefined ? "" : chooseTask(alloc, given) };
    await client.write("POST", `/v1/client/allocation/${encodeURIComponent(alloc.ID)}/signal`, request);
    return 0;
  },
};
