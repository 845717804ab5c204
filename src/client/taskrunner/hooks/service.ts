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
import { createHash } from "node:crypto";
import { connect } from "node:net";
import { allocTaskGroup, type Allocation } from "../../../structs/alloc.ts";
import type { ClientEndpoint } from "../../../structs/client-endpoint.ts";
import type { Service, ServiceCheck, Task, TaskGroup } from "../../../structs/job.ts";
import type { ServiceRegistration } from "../../../structs/service-registration.ts";
import { checkMode, type AllocCheckStatus } from "../../../structs/check-status.ts";
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

/** Nomad's outputSizeLimit: the most of a check's output a result keeps. */
const CHECK_OUTPUT_LIMIT = 3 * 1024;

/** What one run of a check found: drover's status, and what the checks API shows of it. */
export interface CheckOutcome {
  status: CheckStatus;
  statusCode?: number;
  output: string;
}

/** At most CHECK_OUTPUT_LIMIT bytes of `body`, as text. */
async function limitedText(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  while (size < CHECK_OUTPUT_LIMIT) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
  }
  await reader.cancel();
  return Buffer.concat(chunks).subarray(0, CHECK_OUTPUT_LIMIT).toString("utf8");
}

const failed = (err: unknown): CheckOutcome => ({ status: "critical", output: `nomad: ${(err as Error).message}` });

/** One check, once. Outputs are Nomad's: "nomad: http ok", "nomad: tcp ok", else the body or the error. */
export async function runCheck(check: ServiceCheck, service: Service, ctx: TaskHookContext): Promise<CheckOutcome> {
  const timeoutMs = check.Timeout / NS_PER_MS;
  const { address, port } = addressOf(ctx.alloc, check.PortLabel || service.PortLabel);
  switch (check.Type) {
    case "http": {
      const url = `${check.Protocol || "http"}://${address}:${port}${check.Path.startsWith("/") ? "" : "/"}${check.Path}`;
      const headers = Object.fromEntries(Object.entries(check.Header).map(([name, values]) => [name, values.join(", ")]));
      try {
        const response = await fetch(url, { method: check.Method || "GET", headers, signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
        const output = response.status === 200 ? (await response.body?.cancel(), "nomad: http ok") : await limitedText(response.body);
        // Consul's rules, which Nomad's checks follow: 2xx passes, 429 warns.
        const status = response.status >= 200 && response.status < 300 ? "passing" : response.status === 429 ? "warning" : "critical";
        return { status, statusCode: response.status, output };
      } catch (err) {
        return failed(err);
      }
    }
    case "tcp":
      return new Promise<CheckOutcome>((done) => {
        const socket = connect({ host: address, port, timeout: timeoutMs });
        const end = (outcome: CheckOutcome) => (socket.destroy(), done(outcome));
        socket.once("connect", () => end({ status: "passing", output: "nomad: tcp ok" }));
        socket.once("timeout", () => end({ status: "critical", output: `nomad: dial tcp ${address}:${port}: i/o timeout` }));
        socket.once("error", (err) => end(failed(err)));
      });
    case "script": {
      try {
        const result = await ctx.execInTask([check.Command, ...check.Args], timeoutMs);
        const status = result.exitCode === 0 ? "passing" : result.exitCode === 1 ? "warning" : "critical";
        return { status, output: (result.stdout + result.stderr).slice(0, CHECK_OUTPUT_LIMIT) };
      } catch (err) {
        return failed(err);
      }
    }
    default:
      return { status: "critical", output: `nomad: check type "${check.Type}" is not run by drover` };
  }
}

const unixNow = () => Math.floor(Date.now() / 1000);

/**
 * Who a check's result belongs to, as Nomad's checks hook names it: its ID
 * is an MD5 of the alloc, group and the check's definition (NomadCheckID),
 * so the same check keeps its ID across restarts of the task.
 */
function checkCoordinates(ctx: PoststartRequest, service: Service, check: ServiceCheck): Omit<AllocCheckStatus, "Status" | "StatusCode" | "Output" | "Timestamp"> {
  const { alloc } = ctx;
  const hash = createHash("md5");
  for (const part of [alloc.ID, alloc.TaskGroup, check.TaskName, check.Name, check.Type, check.PortLabel, check.OnUpdate, check.AddressMode, check.Interval, check.Timeout, check.Protocol, check.Path, check.Method]) {
    hash.update(String(part));
  }
  const ownService = ctx.task.Services.includes(service);
  return {
    ID: hash.digest("hex"),
    Mode: checkMode(check.OnUpdate),
    Group: alloc.Name,
    ...(ownService ? { Task: ctx.task.Name } : {}),
    Service: service.Name,
    Check: check.Name,
  };
}

/**
 * A class, its methods on the prototype: one lives per running task, most
 * with no service at all (issue 35: the agent's memory per task).
 */
class ServiceHook implements TaskHook {
  readonly name = "services";
  private timers: ReturnType<typeof setInterval>[] = [];
  private registered: string[] = [];
  private checkPrefix = "";

  constructor(private readonly deps: ServiceHookDeps) {}

  async poststart(req: PoststartRequest): Promise<void> {
    const group = allocTaskGroup(req.alloc);
    const services = servicesOf(req.task, group);
    if (services.length === 0) return;
    this.checkPrefix = `${req.task.Name}/`;
    const regs = services.map((service, i) => registration(this.deps, req.alloc, service, i));
    await this.deps.endpoint.upsertServices(regs);
    this.registered = regs.map((reg) => reg.ID);
    req.emitEvent(taskEvent("Task Setup", { Message: `registered services: ${services.map((s) => s.Name).join(", ")}` }));
    for (const service of services) for (const check of service.Checks) this.watch(req, service, check);
  }

  async preKill(): Promise<void> {
    await this.deregister();
  }

  async exited(): Promise<void> {
    await this.deregister();
  }

  async stop(): Promise<void> {
    await this.deregister();
  }

  async shutdown(): Promise<void> {
    // The task keeps running; the next agent registers its services again.
    this.stopChecks();
    if (this.checkPrefix) this.deps.checks?.remove(this.checkPrefix);
  }

  private stopChecks(): void {
    for (const timer of this.timers) clearInterval(timer);
    if (this.timers.length > 0) this.timers = [];
  }

  private async deregister(): Promise<void> {
    this.stopChecks();
    if (this.checkPrefix) this.deps.checks?.remove(this.checkPrefix);
    if (this.registered.length === 0) return;
    const ids = this.registered;
    this.registered = [];
    await this.deps.endpoint.deleteServices(ids);
  }

  private watch(ctx: PoststartRequest, service: Service, check: ServiceCheck): void {
    const { deps } = this;
    const key = `${this.checkPrefix}${service.Name}/${check.Name}`;
    const started = Date.now();
    const restart = check.CheckRestart;
    let unhealthy = 0;
    let running = false;
    const coordinates = checkCoordinates(ctx, service, check);
    deps.checks?.set(key, (check.InitialStatus as CheckStatus) || "critical", { ...coordinates, Status: "pending", Output: "nomad: waiting to run", Timestamp: unixNow() });
    const tick = async () => {
      if (running) return;
      running = true;
      try {
        const { status, statusCode, output } = await runCheck(check, service, ctx);
        deps.checks?.set(key, status, {
          ...coordinates,
          Status: status === "passing" ? "success" : "failure",
          ...(statusCode !== undefined ? { StatusCode: statusCode } : {}),
          Output: output,
          Timestamp: unixNow(),
        });
        if (!restart || restart.Limit === 0 || Date.now() - started < restart.Grace / NS_PER_MS) return;
        const bad = status === "critical" || (status === "warning" && !restart.IgnoreWarnings);
        unhealthy = bad ? unhealthy + 1 : 0;
        if (unhealthy >= restart.Limit) {
          unhealthy = 0;
          this.stopChecks();
          await ctx.restartTask(`healthcheck: check "${check.Name}" unhealthy`, true);
        }
      } finally {
        running = false;
      }
    };
    this.timers.push(setInterval(() => void tick(), check.Interval / NS_PER_MS));
    void tick();
  }
}

export function serviceHook(deps: ServiceHookDeps): TaskHook {
  return new ServiceHook(deps);
}
