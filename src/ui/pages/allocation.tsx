/**
 * /ui/allocations/<id>: an allocation (its namespace is its own: every
 * request after the first carries it, and its job's link names it), its tasks and their states, live CPU and
 * memory charts (the alloc's and each task's, reservation beside use), the
 * events timeline, restart/signal/stop, live logs and an exec terminal.
 */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { inNamespace, send } from "../api/client.ts";
import { AllocStatsSchema, AllocationSchema, type Allocation } from "../api/shapes.ts";
import { accessIn, can } from "../acl/capabilities.ts";
import { ActionButton, Denied, ErrorBanner, InNamespace, KeyValues, ObjectPending, Section, StatusBadge, Table } from "../components/common.tsx";
import { EventsTimeline } from "../components/events-timeline.tsx";
import { ExecTerminal } from "../components/exec-terminal.tsx";
import { LogViewer } from "../components/log-viewer.tsx";
import { cpuMhz, memoryBytes, MIB } from "../components/usage.ts";
import { sampleTime, USAGE_COLUMNS, UsagePair, usageLines } from "../components/usage-charts.tsx";
import { useAccess } from "../hooks/use-access.ts";
import { useSeries } from "../hooks/use-series.ts";
import { useWatch } from "../hooks/use-watch.ts";
import { dateTime, shortId } from "../format.ts";
import { paths } from "../router.ts";

const SIGNALS = ["SIGHUP", "SIGINT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGQUIT", "SIGKILL"];

const LINES = usageLines("reserved", "reserved");

/** The alloc's tasks in a stable order: the job's order where known. */
function taskNames(alloc: Allocation): string[] {
  const group = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
  const fromJob = group?.Tasks.map((task) => task.Name) ?? [];
  const extra = Object.keys(alloc.TaskStates).filter((name) => !fromJob.includes(name)).sort();
  return [...fromJob, ...extra];
}

function reserved(alloc: Allocation, task: string): { cpu: number; memory: number } {
  const resources = alloc.AllocatedResources?.Tasks[task];
  return { cpu: resources?.Cpu?.CpuShares ?? 0, memory: (resources?.Memory?.MemoryMB ?? 0) * MIB };
}

function UsageCharts({ alloc, tasks }: { alloc: Allocation; tasks: string[] }) {
  const running = alloc.ClientStatus === "running" || alloc.ClientStatus === "pending";
  const limits = tasks.map((task) => reserved(alloc, task));
  const total = limits.reduce((sum, limit) => ({ cpu: sum.cpu + limit.cpu, memory: sum.memory + limit.memory }), { cpu: 0, memory: 0 });
  // Columns: time, then the alloc's, then each task's.
  const series = useSeries(running ? inNamespace(`/v1/client/allocation/${encodeURIComponent(alloc.ID)}/stats`, alloc.Namespace) : null, AllocStatsSchema, USAGE_COLUMNS * (tasks.length + 1), (stats) => {
    const values = [cpuMhz(stats.ResourceUsage), total.cpu, memoryBytes(stats.ResourceUsage), total.memory];
    tasks.forEach((task, i) => {
      const usage = stats.Tasks[task]?.ResourceUsage;
      values.push(cpuMhz(usage), limits[i]!.cpu, memoryBytes(usage), limits[i]!.memory);
    });
    return { time: sampleTime(stats.Timestamp), values };
  });
  if (!running) return <p class="muted">The allocation is {alloc.ClientStatus}: no live usage.</p>;
  const charts = [{ name: "Allocation", index: 0 }, ...(tasks.length > 1 ? tasks.map((task, i) => ({ name: `Task ${task}`, index: i + 1 })) : [])];
  return (
    <div class="charts">
      {charts.map(({ name, index }) => (
        <UsagePair key={name} owner={name} series={series} index={index} lines={LINES} />
      ))}
    </div>
  );
}

function SignalForm({ client, tasks }: { client: (suffix: string) => string; tasks: string[] }) {
  const [signal, setSignal] = useState("SIGHUP");
  const [task, setTask] = useState("");
  return (
    <span class="signal-form">
      <label>
        <span class="visually-hidden">Signal</span>
        <select value={signal} onChange={(event) => setSignal(event.currentTarget.value)}>
          {SIGNALS.map((name) => (
            <option key={name}>{name}</option>
          ))}
        </select>
      </label>
      {tasks.length > 1 ? (
        <label>
          <span class="visually-hidden">Task</span>
          <select value={task} onChange={(event) => setTask(event.currentTarget.value)}>
            <option value="">all tasks</option>
            {tasks.map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
      ) : null}
      <ActionButton
        label="Send signal"
        capability="alloc-lifecycle"
        run={() => send(client("/signal"), { method: "PUT", body: { Signal: signal, ...(task ? { Task: task } : {}) } })}
      />
    </span>
  );
}

export function AllocationPage({ id }: { id: string }) {
  const { data: alloc, error } = useWatch(`/v1/allocation/${encodeURIComponent(id)}`, AllocationSchema);
  const tokenAccess = useAccess();
  if (!alloc) {
    return <ObjectPending kind="Allocation" id={id} what="the allocation" error={error} />;
  }
  const access = accessIn(tokenAccess, alloc.Namespace);
  const tasks = taskNames(alloc);
  const runningTasks = tasks.filter((task) => alloc.TaskStates[task]?.State === "running");
  const startedTasks = tasks.filter((task) => alloc.TaskStates[task] && alloc.TaskStates[task]!.State !== "pending");
  const live = alloc.ClientStatus === "running";
  const client = (suffix: string) => inNamespace(`/v1/client/allocation/${encodeURIComponent(alloc.ID)}${suffix}`, alloc.Namespace);

  return (
    <InNamespace namespace={alloc.Namespace}>
      <div class="page-head">
        <h1>
          <span class="crumb">Allocation</span> <span class="mono">{shortId(alloc.ID)}</span>
        </h1>
        <StatusBadge status={alloc.ClientStatus ?? ""} />
        <div class="grow" />
        {live ? (
          <div class="actions" role="group" aria-label="Allocation actions">
            <ActionButton label="Restart" capability="alloc-lifecycle" run={() => send(client("/restart"), { method: "PUT", body: {} })} />
            <SignalForm client={client} tasks={runningTasks} />
            <ActionButton label="Stop" confirm="Confirm stop" tone="danger" capability="alloc-lifecycle" run={() => send(inNamespace(`/v1/allocation/${encodeURIComponent(alloc.ID)}/stop`, alloc.Namespace), { method: "PUT", body: {} })} />
          </div>
        ) : null}
      </div>
      <ErrorBanner error={error} />
      <Section title="Overview">
        <KeyValues
          items={[
            ["Name", alloc.Name],
            ["Job", <a href={paths.job(alloc.JobID ?? "", alloc.Namespace)}>{alloc.JobID}</a>],
            ["Namespace", alloc.Namespace],
            ["Client", <a href={paths.client(alloc.NodeID ?? "")}>{alloc.NodeName || shortId(alloc.NodeID ?? "")}</a>],
            ["Desired", alloc.DesiredStatus],
            ["Status", alloc.ClientDescription || alloc.ClientStatus],
            ["Created", dateTime(alloc.CreateTime)],
            ...(alloc.PreviousAllocation ? [["Replaces", <a href={paths.allocation(alloc.PreviousAllocation)}>{shortId(alloc.PreviousAllocation)}</a>] as [string, ComponentChildren]] : []),
            ...(alloc.NextAllocation ? [["Replaced by", <a href={paths.allocation(alloc.NextAllocation)}>{shortId(alloc.NextAllocation)}</a>] as [string, ComponentChildren]] : []),
          ]}
        />
      </Section>
      <Section title="Resource usage" id="usage">
        <UsageCharts alloc={alloc} tasks={tasks} />
      </Section>
      <Section title="Tasks" id="tasks">
        <Table columns={["Task", "State", "Lifecycle", { label: "Restarts", num: true }, "Started", "Finished", { label: "Actions", hidden: true }]}>
          {tasks.map((task) => {
            const state = alloc.TaskStates[task];
            const definition = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Tasks.find((t) => t.Name === task);
            const hook = definition?.Lifecycle?.Hook;
            return (
              <tr key={task} data-task={task}>
                <td>{task}</td>
                <td>
                  <StatusBadge status={state?.Failed ? "failed" : (state?.State ?? "pending")} />
                </td>
                <td>{hook ? `${hook}${definition?.Lifecycle?.Sidecar ? " (sidecar)" : ""}` : "main"}</td>
                <td class="num">{state?.Restarts ?? 0}</td>
                <td>{dateTime(state?.StartedAt)}</td>
                <td>{dateTime(state?.FinishedAt)}</td>
                <td class="row-actions">
                  {state?.State === "running" && tasks.length > 1 ? (
                    <ActionButton label="Restart" capability="alloc-lifecycle" run={() => send(client("/restart"), { method: "PUT", body: { TaskName: task } })} />
                  ) : null}
                </td>
              </tr>
            );
          })}
        </Table>
      </Section>
      <Section title="Events" id="events">
        <div class="events-grid">
          {tasks.map((task) => (
            <div key={task}>
              {tasks.length > 1 ? <h3>{task}</h3> : null}
              <EventsTimeline events={alloc.TaskStates[task]?.Events ?? []} />
            </div>
          ))}
        </div>
      </Section>
      <Section title="Logs" id="logs">
        {can(access, "read-logs") === false ? (
          <Denied capability="read-logs" />
        ) : startedTasks.length === 0 ? (
          <p class="muted">No task has started yet.</p>
        ) : (
          <LogViewer allocId={alloc.ID} namespace={alloc.Namespace} tasks={startedTasks} />
        )}
      </Section>
      <Section title="Exec" id="exec">
        {can(access, "alloc-exec") === false ? (
          <Denied capability="alloc-exec" />
        ) : runningTasks.length === 0 ? (
          <p class="muted">No task is running: exec needs a running task.</p>
        ) : (
          <ExecTerminal allocId={alloc.ID} namespace={alloc.Namespace} tasks={runningTasks} />
        )}
      </Section>
    </InNamespace>
  );
}
