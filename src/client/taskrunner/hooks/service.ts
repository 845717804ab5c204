/**
 * Registers the task's services in Nomad's native catalog while it runs,
 * and runs their checks (Nomad's service hook with the "nomad" provider):
 *
 *   poststart (also after a reattach) ──> register every service ──> start each check's timer
 *      each interval: http | tcp | script (exec in the task), bounded by the check's timeout
 *        passing / warning / critical ──> the alloc's check results (its health watcher reads them)
 *                                     ──> check_restart: after `grace`, `limit`
 *        unhealthy results in a row restart the task (a failure, as Nomad counts it)
 *   exited / stop ──> stop the timers, deregister (before shutdown_delay and the kill)
 *
 * Group services (no task of their own) are registered by the group's first
 * main task. Whatever `provider` says, services go to drover's own catalog:
 * drover has no Consul.
 */
import { connect } from "node:net";
import { allocTaskGroup, type Allocation } from "../../../structs/alloc.ts";
import type { ClientEndpoint } from "../../../structs/client-endpoint.ts";
import type { Service, ServiceCheck, Task, TaskGroup } from "../../../structs/job.ts";
import type { ServiceRegistration } from "../../../structs/service-registration.ts";
import { NS_PER_MS } from "../../../lib/units.ts";
import { taskEvent } from "../task-state.ts";
import type { CheckStatus, CheckStatuses } from "../../allocrunner/check-statuses.ts";
import type { PoststartRequest, TaskHook, TaskHookContext } from "./hook.ts";

export type { CheckStatus };

type Registration = Omit<ServiceRegistration, "CreateIndex" | "ModifyIndex">;

export interface ServiceHookDeps {
  endpoint: Pick<ClientEndpoint, "upsertServices" | "deleteServices">;
  nodeId: string;
  datacenter: string;
  /** The alloc's check results, which its health watcher reads (health_check = "checks"). */
  checks?: CheckStatuses;
}

/** The services `task` registers: its own, and its group's when it is the group's first main task. */
export function servicesOf(task: Task, group: TaskGroup | undefined): Service[] {
  const main = group?.Tasks.find((t) => t.Lifecycle === null);
  return [...task.Services, ...(group && main?.Name === task.Name ? group.Services : [])];
}

/** Where a service or check reaches the task: the alloc's address and the port its label names. */
export function addressOf(alloc: Allocation, portLabel: string): { address: string; port: number } {
  const shared = alloc.AllocatedResources.Shared;
  const address = shared.Networks[0]?.IP || shared.Ports[0]?.HostIP || "127.0.0.1";
  if (/^\d+$/.test(portLabel)) return { address, port: Number(portLabel) };
  const port = shared.Ports.find((p) => p.Label === portLabel);
  return { address: port?.HostIP || address, port: port?.Value ?? 0 };
}

function registration(deps: ServiceHookDeps, alloc: Allocation, service: Service, index: number): Registration {
  const { address, port } = addressOf(alloc, service.PortLabel);
  return {
    // Nomad's form: _nomad-task-<alloc>-<group or task>-<service>-<port>.
    ID: `_nomad-task-${alloc.ID}-${alloc.TaskGroup}-${service.Name}-${service.PortLabel || index}`,
    ServiceName: service.Name,
    Namespace: alloc.Namespace,
    NodeID: deps.nodeId,
    Datacenter: deps.datacenter,
    JobID: alloc.JobID,
    AllocID: alloc.ID,
    Tags: service.Tags,
    Address: address,
    Port: port,
  };
}

/** One check, once. */
export async function runCheck(check: ServiceCheck, service: Service, ctx: TaskHookContext): Promise<CheckStatus> {
  const timeoutMs = check.Timeout / NS_PER_MS;
  const { address, port } = addressOf(ctx.alloc, check.PortLabel || service.PortLabel);
  switch (check.Type) {
    case "http": {
      const url = `${check.Protocol || "http"}://${address}:${port}${check.Path.startsWith("/") ? "" : "/"}${check.Path}`;
      const headers = Object.fromEntries(Object.entries(check.Header).map(([name, values]) => [name, values.join(", ")]));
      try {
        const response = await fetch(url, { method: check.Method || "GET", headers, signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
        await response.body?.cancel();
        // Consul's rules, which Nomad's checks follow: 2xx passes, 429 warns.
        return response.status >= 200 && response.status < 300 ? "passing" : response.status === 429 ? "warning" : "critical";
      } catch {
        return "critical";
      }
    }
    case "tcp":
      return new Promise<CheckStatus>((done) => {
        const socket = connect({ host: address, port, timeout: timeoutMs });
        const end = (status: CheckStatus) => (socket.destroy(), done(status));
        socket.once("connect", () => end("passing"));
        socket.once("timeout", () => end("critical"));
        socket.once("error", () => end("critical"));
      });
    case "script": {
      try {
        const result = await ctx.execInTask([check.Command, ...check.Args], timeoutMs);
        return result.exitCode === 0 ? "passing" : result.exitCode === 1 ? "warning" : "critical";
      } catch {
        return "critical";
      }
    }
    default:
      return "critical";
  }
}

export function serviceHook(deps: ServiceHookDeps): TaskHook {
  let timers: ReturnType<typeof setInterval>[] = [];
  let registered: string[] = [];
  let checkPrefix = "";

  const stopChecks = () => {
    for (const timer of timers) clearInterval(timer);
    timers = [];
  };
  const deregister = async () => {
    stopChecks();
    if (checkPrefix) deps.checks?.remove(checkPrefix);
    if (registered.length === 0) return;
    const ids = registered;
    registered = [];
    await deps.endpoint.deleteServices(ids);
  };

  const watch = (ctx: PoststartRequest, service: Service, check: ServiceCheck) => {
    const key = `${checkPrefix}${service.Name}/${check.Name}`;
    const started = Date.now();
    const restart = check.CheckRestart;
    let unhealthy = 0;
    let running = false;
    deps.checks?.set(key, (check.InitialStatus as CheckStatus) || "critical");
    const tick = async () => {
      if (running) return;
      running = true;
      try {
        const status = await runCheck(check, service, ctx);
        deps.checks?.set(key, status);
        if (!restart || restart.Limit === 0 || Date.now() - started < restart.Grace / NS_PER_MS) return;
        const bad = status === "critical" || (status === "warning" && !restart.IgnoreWarnings);
        unhealthy = bad ? unhealthy + 1 : 0;
        if (unhealthy >= restart.Limit) {
          unhealthy = 0;
          stopChecks();
          await ctx.restartTask(`healthcheck: check "${check.Name}" unhealthy`, true);
        }
      } finally {
        running = false;
      }
    };
    timers.push(setInterval(() => void tick(), check.Interval / NS_PER_MS));
    void tick();
  };

  return {
    name: "services",
    async poststart(req: PoststartRequest) {
      const group = allocTaskGroup(req.alloc);
      const services = servicesOf(req.task, group);
      if (services.length === 0) return;
      checkPrefix = `${req.task.Name}/`;
      const regs = services.map((service, i) => registration(deps, req.alloc, service, i));
      await deps.endpoint.upsertServices(regs);
      registered = regs.map((reg) => reg.ID);
      req.emitEvent(taskEvent("Task Setup", { Message: `registered services: ${services.map((s) => s.Name).join(", ")}` }));
      for (const service of services) for (const check of service.Checks) watch(req, service, check);
    },
    async preKill() {
      await deregister();
    },
    async exited() {
      await deregister();
    },
    async stop() {
      await deregister();
    },
    async shutdown() {
      // The task keeps running; the next agent registers its services again.
      stopChecks();
      if (checkPrefix) deps.checks?.remove(checkPrefix);
    },
  };
}
