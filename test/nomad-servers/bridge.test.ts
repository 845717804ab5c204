/**
 * A group bridge network placed by a real Nomad 0.12 server on a drover
 * node: the node reports Nomad's bridge network (so Nomad's scheduler
 * accepts it for mode "bridge"), the alloc's static port reaches the task's
 * `to` port on 127.0.0.1, and a stop from the server leaves no namespace,
 * rule or lease, also when it came while the drover agent was SIGKILLed
 * (the restarted agent tears it down). The node has a bridge and subnet of
 * the test's own.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectIsolation } from "../../src/nsenter/detect.ts";
import { testAgent, type TestAgent } from "../helpers/agent.ts";
import { capabilities, freePort, tempDir, waitFor } from "../helpers/index.ts";
import { nomadGet, nomadServer, type NomadAgent } from "../helpers/nomad-agents.ts";
import { NOMAD_BINARY, nomad } from "../helpers/nomad.ts";
import { bridgeMissing, hostTool as run, httpText as get, removeTestBridge, testBridge } from "../helpers/bridge.ts";

const isolation = await detectIsolation();
const why = !NOMAD_BINARY
  ? "no Nomad binary"
  : !isolation.available
    ? isolation.reason
    : capabilities.cgroups.mode === "none"
      ? "no cgroups"
      : bridgeMissing;
if (why) console.log(`skipping the Nomad server bridge test: ${why}`);

const network = testBridge("drns");
const JOB = `bridge-${process.pid}`;

// Registered first, so it runs while the server and the drover agent still live.
afterAll(async () => {
  if (why) return;
  await nomad(server.http, "job", "stop", "-purge", JOB).catch(() => undefined);
  await waitFor("no namespace of the job left", async () => ((await run(["ip", "netns", "list"])).includes(allocId ?? "none") ? null : true)).catch((err: unknown) => console.error(err));
  await removeTestBridge(network);
});

let allocId: string | undefined;
const server: NomadAgent = why ? (undefined as never) : await nomadServer();
const drover: TestAgent = why
  ? (undefined as never)
  : await testAgent("drover-nomad-bridge-", {
      name: "drover-bridge",
      client: { servers: [server.rpc], network_interface: "lo", bridge_network_name: network.bridge, bridge_network_subnet: network.subnet },
      server: { enabled: false },
    });

beforeAll(async () => {
  if (why) return;
  await server.start();
  await drover.start();
}, 120_000);

/** The job file: raw_exec serving on 8080 inside, the static host port mapped to it. */
function jobFile(staticPort: number): string {
  const file = join(tempDir("drover-nomad-bridge-job-"), "job.hcl");
  writeFileSync(
    file,
    `job "${JOB}" {
  datacenters = ["dc1"]
  group "g" {
    network {
      mode = "bridge"
      port "http" {
        static = ${staticPort}
        to     = 8080
      }
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/usr/bin/busybox"
        args    = ["sh", "-c", "mkdir -p www && echo port=$NOMAD_PORT_http host=$NOMAD_HOST_PORT_http > www/index.html && exec busybox httpd -f -p 8080 -h www"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`,
  );
  return file;
}

/** The job's running alloc, once there. */
function runningAlloc(): Promise<{ ID: string; ClientStatus: string }> {
  return waitFor("the alloc running", async () => (await nomadGet<{ ID: string; ClientStatus: string }[]>(server, `/v1/job/${JOB}/allocations`)).find((a) => a.ClientStatus === "running"), { timeoutMs: 60_000 });
}

/** Nothing on the host names the alloc: namespace, rules, lease. */
async function networkGone(id: string, address: string): Promise<void> {
  await waitFor("the namespace removed", () => (existsSync(`/var/run/netns/${id}`) ? null : true));
  await waitFor("no rule names the alloc", async () => ((await run(["iptables-save"])).includes(id) ? null : true));
  expect(existsSync(`/var/lib/cni/networks/nomad/${address}`)).toBe(false);
}

describe.skipIf(why !== null)("a bridge group placed by a Nomad 0.12 server", () => {
  test("runs in the alloc's namespace, reached on its mapped port; the server's stop removes its network", async () => {
    const node = await waitFor("the drover node ready", async () => (await nomadGet<{ ID: string; Name: string; Status: string }[]>(server, "/v1/nodes")).find((n) => n.Name === "drover-bridge" && n.Status === "ready"));
    const detail = await nomadGet<{ NodeResources: { Networks: { Mode: string }[] } }>(server, `/v1/node/${node.ID}`);
    expect(detail.NodeResources.Networks.map((network) => network.Mode)).toEqual(["host", "bridge"]);

    const staticPort = await freePort();
    const file = jobFile(staticPort);
    const registered = await nomad(server.http, "job", "run", "-detach", file);
    expect(registered.code).toBe(0);
    const alloc = await runningAlloc();
    allocId = alloc.ID;
    expect(await waitFor("the task on its mapped port", () => get(`http://127.0.0.1:${staticPort}/index.html`))).toBe(`port=8080 host=${staticPort}\n`);
    const address = (await run(["ip", "-n", alloc.ID, "-4", "-o", "addr", "show", "eth0"])).match(/inet (\S+)\//)![1]!;

    expect((await nomad(server.http, "job", "stop", JOB)).code).toBe(0);
    await networkGone(alloc.ID, address);
  }, 120_000);

  test("stopped by the server while the drover agent was SIGKILLed: the restarted agent removes its network", async () => {
    const staticPort = await freePort();
    expect((await nomad(server.http, "job", "run", "-detach", jobFile(staticPort))).code).toBe(0);
    const alloc = await runningAlloc();
    allocId = alloc.ID;
    await waitFor("the task on its mapped port", () => get(`http://127.0.0.1:${staticPort}/index.html`));
    const address = (await run(["ip", "-n", alloc.ID, "-4", "-o", "addr", "show", "eth0"])).match(/inet (\S+)\//)![1]!;

    drover.process.kill("SIGKILL");
    await drover.process.exited;
    expect((await nomad(server.http, "job", "stop", JOB)).code).toBe(0);
    // The task and its namespace outlive the agent until it is back.
    expect(existsSync(`/var/run/netns/${alloc.ID}`)).toBe(true);
    await drover.start();
    await networkGone(alloc.ID, address);
    expect(await get(`http://127.0.0.1:${staticPort}/index.html`)).toBeNull();
  }, 120_000);
});
