/** `drover alloc status [-json] [-verbose] <alloc>`: an allocation, its addresses, and each task's state and events. */
import { allocTask, type Allocation } from "../../structs/alloc.ts";
import type { TaskState } from "../../structs/task-state.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { formatKV, formatList, formatMb, formatNanos, formatTime, nanosAgo, orNone, shortId } from "../format.ts";
import { fetchAlloc, taskNames } from "./tasks.ts";

function addresses(alloc: Allocation): string | undefined {
  const network = alloc.AllocatedResources.Shared.Networks[0];
  if (!network) return undefined;
  const rows = [
    ...network.ReservedPorts.map((port) => [port.Label, "no", `${network.IP}:${port.Value}`]),
    ...network.DynamicPorts.map((port) => [port.Label, "yes", `${network.IP}:${port.Value}${port.To > 0 ? ` -> ${port.To}` : ""}`]),
  ];
  return rows.length === 0 ? undefined : formatList([["Label", "Dynamic", "Address"], ...rows]);
}

const orNA = (value: string | null) => (value ? formatTime(new Date(value)) : "N/A");

function taskSection(alloc: Allocation, name: string, state: TaskState | undefined): string {
  const task = allocTask(alloc, name);
  const lifecycle = task?.Lifecycle ? ` (${task.Lifecycle.Hook}${task.Lifecycle.Sidecar ? " sidecar" : ""})` : "";
  const resources = alloc.AllocatedResources.Tasks[name];
  const lines = [`Task "${name}"${lifecycle} is "${state?.State ?? "pending"}"`];
  if (resources) {
    lines.push(
      "Task Resources:",
      formatList([
        ["CPU", "Memory", "Disk"],
        [`${resources.Cpu.CpuShares} MHz`, formatMb(resources.Memory.MemoryMB), formatMb(alloc.AllocatedResources.Shared.DiskMB)],
      ]),
    );
  }
  if (state) {
    lines.push(
      "",
      "Task Events:",
      formatKV([
        ["Started At", orNA(state.StartedAt)],
        ["Finished At", orNA(state.FinishedAt)],
        ["Total Restarts", String(state.Restarts)],
        ["Last Restart", orNA(state.LastRestart)],
      ]),
      "",
      "Recent Events:",
      formatList([
        ["Time", "Type", "Description"],
        ...[...state.Events].reverse().map((event) => [formatNanos(event.Time), event.Type, event.DisplayMessage || event.Message]),
      ]),
    );
  }
  return lines.join("\n");
}

export const allocStatus: Subcommand = {
  summary: "Show an allocation's status, addresses and task events",
  usage: `Usage: drover alloc status [options] <allocation>

Options:
${ADDRESS_USAGE}
  -json       JSON for scripts (the allocation with its job).
  -verbose    Full IDs.`,
  flags: { booleans: ["json", "verbose"] },
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one allocation ID");
    const alloc = await fetchAlloc(client, prefix!);
    if (flags.booleans.json) {
      io.print(JSON.stringify(alloc, null, 2));
      return 0;
    }
    const id = (value: string) => shortId(value, flags.booleans.verbose ?? false);
    const pairs: [string, string][] = [
      ["ID", id(alloc.ID)],
      ["Eval ID", id(alloc.EvalID)],
      ["Name", alloc.Name],
      ["Node ID", id(alloc.NodeID)],
      ["Node Name", alloc.NodeName],
      ["Job ID", alloc.JobID],
      ["Job Version", String(alloc.Job.Version)],
      ["Client Status", alloc.ClientStatus],
      ["Client Description", orNone(alloc.ClientDescription)],
      ["Desired Status", alloc.DesiredStatus],
      ["Desired Description", orNone(alloc.DesiredDescription)],
      ["Created", nanosAgo(alloc.CreateTime)],
      ["Modified", nanosAgo(alloc.ModifyTime)],
    ];
    if (alloc.PreviousAllocation) pairs.push(["Previous Allocation", id(alloc.PreviousAllocation)]);
    if (alloc.NextAllocation) pairs.push(["Next Allocation", id(alloc.NextAllocation)]);
    io.print(formatKV(pairs));
    const table = addresses(alloc);
    if (table) io.print(`\nAllocation Addresses:\n${table}`);
    for (const name of taskNames(alloc)) io.print(`\n${taskSection(alloc, name, alloc.TaskStates?.[name])}`);
    return 0;
  },
};
