/**
 * The native service hook on its own: a task's services are in the catalog
 * while it runs and leave it when it stops; http, tcp and script checks give
 * Consul's passing, warning and critical; check_restart restarts a task
 * whose check keeps failing.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createServer, type Server } from "node:net";
import { runCheck, serviceHook, type ServiceHookDeps } from "../../../src/client/taskrunner/hooks/service.ts";
import type { TaskHookContext } from "../../../src/client/taskrunner/hooks/hook.ts";
import type { ExecResult } from "../../../src/drivers/driver.ts";
import { NS_PER_MS } from "../../../src/lib/units.ts";
import type { Allocation } from "../../../src/structs/alloc.ts";
import type { ServiceRegistration } from "../../../src/structs/service-registration.ts";
import { freePort, waitFor } from "../../helpers/index.ts";
import { allocRunner, placeJob } from "../fixtures.ts";

/** Answers each path with the status it names ("/200", "/429", "/500"); "/slow" never answers. */
const http = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    const path = new URL(request.url).pathname.slice(1);
    if (path === "slow") return new Promise<Response>(() => {});
    return new Response(path, { status: Number(path) || 404 });
  },
});
const tcp: Server = await new Promise((resolve) => {
  const server = createServer((socket) => socket.end()).listen(0, "127.0.0.1", () => resolve(server));
});
afterAll(() => {
  http.stop(true);
  tcp.close();
});
const tcpPort = (tcp.address() as { port: number }).port;
const httpPort = http.port!;

/** A service job whose group's static port "http" is `port`; `checks` go in the service block. */
function serviceJob(port: number, checks: string, restart = 'restart {\n attempts = 0\n mode = "fail"\n }'): string {
  return `job "j" {
  type = "service"
  group "g" {
    ${restart}
    network {
      port "http" {
        static = ${port}
      }
    }
    task "web" {
      driver = "raw_exec"
      config {
        command = "run"
      }
      service {
        name = "web"
        port = "http"
        tags = ["a", "b"]
        ${checks}
      }
    }
  }
}`;
}

/** The catalog as the hook sees it: what is registered now, and every call. */
function catalog() {
  const registered = new Map<string, Omit<ServiceRegistration, "CreateIndex" | "ModifyIndex">>();
  const calls: string[] = [];
  const endpoint: ServiceHookDeps["endpoint"] = {
    async upsertServices(regs) {
      for (const reg of regs) registered.set(reg.ID, reg);
      calls.push(`upsert ${regs.map((reg) => reg.ServiceName).join(",")}`);
    },
    async deleteServices(ids) {
      for (const id of ids) registered.delete(id);
      calls.push(`delete ${ids.length}`);
    },
  };
  return { registered, calls, deps: { endpoint, nodeId: "node-1", datacenter: "dc1" } };
}

/** A placed alloc and the one check of its service, for runCheck. */
async function checkOf(port: number, check: string, exec: (argv: readonly string[]) => ExecResult = () => ({ exitCode: 0, stdout: "", stderr: "" }) as ExecResult) {
  const [alloc] = await placeJob(serviceJob(port, `check {\n ${check}\n interval = "1s"\n timeout = "1s"\n }`));
  const task = alloc!.Job.TaskGroups[0]!.Tasks[0]!;
  const service = task.Services[0]!;
  const ctx = { alloc: alloc!, task, execInTask: async (argv: readonly string[]) => exec(argv) } as unknown as TaskHookContext;
  return { check: service.Checks[0]!, service, ctx };
}

describe("native services", () => {
  test("are registered when the task starts, with the alloc's address and port, and removed when it stops", async () => {
    const port = await freePort();
    const [alloc] = await placeJob(serviceJob(port, ""));
    const { registered, calls, deps } = catalog();
    const { runner, driver } = allocRunner(alloc!, { taskHooks: () => [serviceHook(deps)] });
    void runner.run();
    await waitFor("the service registered", () => registered.size === 1);
    expect([...registered.values()]).toEqual([
      {
        ID: `_nomad-task-${alloc!.ID}-g-web-http`,
        ServiceName: "web",
        Namespace: "default",
        NodeID: "node-1",
        Datacenter: "dc1",
        JobID: "j",
        AllocID: alloc!.ID,
        Tags: ["a", "b"],
        Address: "127.0.0.1",
        Port: port,
      },
    ]);
    await runner.update({ ...alloc!, DesiredStatus: "stop", AllocModifyIndex: alloc!.AllocModifyIndex + 1 });
    await waitFor("the task dead", () => runner.taskStates().web?.State === "dead");
    expect(registered.size).toBe(0);
    // Deregistered before the kill (preKill), then nothing more to remove.
    expect(calls).toEqual(["upsert web", "delete 1"]);
    expect(driver.calls.filter((call) => call.startsWith("stop"))).toHaveLength(1);
    await runner.destroy();
  });

  test("a task that exits on its own takes its services with it", async () => {
    const [alloc] = await placeJob(serviceJob(await freePort(), ""));
    const { registered, deps } = catalog();
    const { runner, driver } = allocRunner(alloc!, { taskHooks: () => [serviceHook(deps)] });
    void runner.run();
    await waitFor("the service registered", () => registered.size === 1);
    driver.finish(alloc!.ID, "web", 0);
    await waitFor("the service gone", () => registered.size === 0);
    await runner.destroy();
  });
});

describe("checks", () => {
  test("http: 2xx passes, 429 warns, anything else, a refused connection or a timeout is critical; the output is Nomad's", async () => {
    for (const [path, status, output] of [
      ["200", "passing", "nomad: http ok"],
      ["204", "passing", ""],
      ["429", "warning", "429"],
      ["500", "critical", "500"],
      ["301", "critical", "301"],
    ] as const) {
      const { check, service, ctx } = await checkOf(httpPort, `type = "http"\n path = "/${path}"`);
      expect(await runCheck(check, service, ctx)).toEqual({ status, statusCode: Number(path), output });
    }
    const refused = await checkOf(await freePort(), 'type = "http"\n path = "/"');
    expect(await runCheck(refused.check, refused.service, refused.ctx)).toMatchObject({ status: "critical", output: expect.stringMatching(/^nomad: /) });
    const slow = await checkOf(httpPort, 'type = "http"\n path = "/slow"');
    slow.check.Timeout = 100 * NS_PER_MS;
    expect(await runCheck(slow.check, slow.service, slow.ctx)).toMatchObject({ status: "critical" });
  });

  test("tcp: a listening port passes, a closed one is critical", async () => {
    const open = await checkOf(tcpPort, 'type = "tcp"');
    expect(await runCheck(open.check, open.service, open.ctx)).toEqual({ status: "passing", output: "nomad: tcp ok" });
    const closed = await checkOf(await freePort(), 'type = "tcp"');
    expect(await runCheck(closed.check, closed.service, closed.ctx)).toMatchObject({ status: "critical", output: expect.stringContaining("ECONNREFUSED") });
  });

  test("script: run in the task; exit 0 passes, 1 warns, anything else is critical", async () => {
    const ran: string[][] = [];
    for (const [code, status] of [[0, "passing"], [1, "warning"], [2, "critical"]] as const) {
      const { check, service, ctx } = await checkOf(httpPort, 'type = "script"\n command = "/bin/check"\n args = ["--fast"]', (argv) => {
        ran.push([...argv]);
        return { exitCode: code, stdout: "out ", stderr: "err" } as ExecResult;
      });
      expect(await runCheck(check, service, ctx)).toEqual({ status, output: "out err" });
    }
    expect(ran[0]).toEqual(["/bin/check", "--fast"]);
  });

  test("check_restart: `limit` critical results in a row restart the task, each counted as a failure", async () => {
    const restart = 'restart {\n attempts = 1\n interval = "10m"\n delay = "0s"\n mode = "fail"\n }';
    const [placed] = await placeJob(
      serviceJob(httpPort, 'check {\n name = "health"\n type = "http"\n path = "/500"\n interval = "1s"\n timeout = "1s"\n check_restart {\n limit = 2\n grace = "0s"\n }\n }', restart),
    );
    // Checked every 20 ms here, rather than the 1 s a job may ask for at the least.
    const alloc: Allocation = structuredClone(placed!);
    alloc.Job.TaskGroups[0]!.Tasks[0]!.Services[0]!.Checks[0]!.Interval = 20 * NS_PER_MS;
    const { registered, calls, deps } = catalog();
    const { runner, driver } = allocRunner(alloc, { taskHooks: () => [serviceHook(deps)] });
    await runner.run();
    // The one restart the policy allows, then the next unhealthy run fails the task: each counted as a failure.
    const state = runner.taskStates().web!;
    expect(state).toMatchObject({ State: "dead", Failed: true, Restarts: 1 });
    expect(state.Events.filter((event) => event.Type === "Restart Signaled").map((event) => event.RestartReason)).toEqual(['healthcheck: check "health" unhealthy', 'healthcheck: check "health" unhealthy']);
    expect(driver.calls.filter((call) => call.startsWith("start"))).toEqual(["start web", "start web"]);
    // Each run registered the service and took it away again.
    expect(calls.filter((call) => call.startsWith("upsert"))).toHaveLength(2);
    expect(registered.size).toBe(0);
    await runner.destroy();
  });
});
