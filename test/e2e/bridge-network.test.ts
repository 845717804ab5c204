/**
 * Group `network { mode = "bridge" }` through the compiled agent, with the
 * real CNI plugins: an exec task and a raw_exec task in the alloc's own
 * namespace, reached on 127.0.0.1 through their mapped host ports (static,
 * dynamic, `to`), the NOMAD_* variables they see, and nothing left on the
 * host after a stop, nor after an agent SIGKILL while the alloc ended.
 *
 * The agent's bridge and subnet are this test's own (not Nomad's "nomad"):
 * the host is shared; the bridge and its NOMAD-ADMIN rule are removed at the end.
 * The group's dns block is the exec task's /etc/resolv.conf. A docker task joins the namespace too, with its hostname, extra_hosts and
 * dns_* written into its /etc/hosts and /etc/resolv.conf.
 * Needs root, the exec driver, iptables, iproute2 and the CNI plugins (the
 * docker test: also Debian's docker-registry, umoci and skopeo).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectIsolation } from "../../src/nsenter/detect.ts";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { testAgent, type TestAgent } from "../helpers/agent.ts";
import { droverRuntimes, type DroverRuntime } from "../helpers/runtimes.ts";
import { capabilities, freePort, tempDir, waitFor } from "../helpers/index.ts";
import { buildImage, missingTools, TestRegistry } from "../helpers/registry.ts";
import { bridgeMissing, hostTool as run, httpText as get, removeTestBridge, testBridge } from "../helpers/bridge.ts";

const LEASES = "/var/lib/cni/networks/nomad";

const isolation = await detectIsolation();
const why = !isolation.available ? isolation.reason : capabilities.cgroups.mode === "none" ? "no cgroups" : bridgeMissing;
if (why) console.log(`skipping the bridge network tests: ${why}`);

/** Everything on the host that names the alloc or its address. */
async function leftovers(allocId: string, address: string, bridge: string): Promise<string[]> {
  const found: string[] = [];
  if (existsSync(`/var/run/netns/${allocId}`)) found.push(`netns ${allocId}`);
  const rules = (await run(["iptables-save"])).split("\n").filter((line) => line.includes(allocId) || line.includes(`${address}/32`) || line.includes(`${address}:`));
  found.push(...rules);
  if (existsSync(join(LEASES, address))) found.push(`lease ${address}`);
  const ports = (await run(["ip", "-br", "link", "show", "master", bridge])).trim();
  if (ports) found.push(`bridge ports: ${ports}`);
  return found;
}

const missing = missingTools();
const buildDir = tempDir("drover-e2e-bridge-build-");
let registry: TestRegistry | undefined;

afterAll(() => registry?.stop());

/** One registry for every runtime's agent, with an image that serves its own /etc files. */
async function theRegistry(): Promise<TestRegistry> {
  if (registry) return registry;
  registry = await TestRegistry.start(buildDir);
  const layout = buildImage(join(buildDir, "build"), "srv", { files: { "/www/.keep": "" }, cmd: ["/bin/sh", "-c", "cat /etc/hosts /etc/resolv.conf > /www/etc.txt; /bin/busybox hostname > /www/hostname.txt; echo serving on 8080; exec /bin/busybox httpd -f -p 8080 -h /www"] });
  registry.push(layout, "srv", "test/srv:1");
  return registry;
}

/** An agent on its own bridge and subnet; removed with its jobs at the end (registered before the agent's own clean-up, so it runs while the agent lives). */
async function bridgeAgent(runtime: DroverRuntime): Promise<{ agent: TestAgent; bridge: string }> {
  const network = testBridge("drbr");
  const { bridge, subnet } = network;
  let agent: TestAgent | undefined;
  afterAll(async () => {
    if (why || !agent) return;
    // A test that failed mid-way leaves its alloc running, and a running alloc keeps its network: stopped here.
    for (const name of ["web", "ends", "box"]) await agent.cli("job", "stop", name);
    const allocDir = join(agent.dataDir, "alloc");
    const ids = existsSync(allocDir) ? readdirSync(allocDir) : [];
    await waitFor("every alloc's network removed", () => ids.every((id) => !existsSync(`/var/run/netns/${id}`)) || null).catch((err: unknown) => console.error(err));
    await removeTestBridge(network);
  });
  agent = await testAgent("drover-e2e-bridge-", { client: { network_interface: "lo", bridge_network_name: bridge, bridge_network_subnet: subnet } }, {}, runtime);
  return { agent, bridge };
}

interface Alloc {
  ID: string;
  ClientStatus: string;
  TaskStates?: Record<string, { Events: { Type: string; DisplayMessage: string }[] }>;
}


function job(name: string, type: "service" | "batch", staticPort: number, wait: string): string {
  return `
job "${name}" {
  type = "${type}"
  group "g" {
    network {
      mode = "bridge"
      port "web" {
        static = ${staticPort}
        to     = 8080
      }
      port "dyn" {
        to = 8081
      }
      port "same" {}
      dns {
        servers  = ["10.0.0.53"]
        searches = ["svc.internal"]
      }
    }
    task "web" {
      driver = "exec"
      leader = true
      config {
        command = "/usr/bin/busybox"
        args    = ["sh", "-c", "env > /local/env.txt; cat /etc/resolv.conf > /local/resolv.txt; echo same > /local/same.txt; busybox httpd -p 8081 -h /local; busybox httpd -p $NOMAD_PORT_same -h /local; busybox httpd -f -p 8080 -h /local & ${wait}"]
      }
    }
    task "raw" {
      driver = "raw_exec"
      config {
        command = "/usr/bin/busybox"
        args    = ["sh", "-c", "mkdir -p www && echo raw > www/raw.txt && exec busybox httpd -f -p 9090 -h www"]
      }
    }
  }
}`;
}

for (const runtime of droverRuntimes()) {
  const { agent, bridge } = await bridgeAgent(runtime);

  describe.skipIf(why !== null)(`group bridge networking (${runtime.name})`, () => {
    beforeAll(() => agent.start());

    test("tasks listen in the alloc's namespace, reached through static, dynamic and `to` ports; a stop leaves nothing", async () => {
      const staticPort = await freePort();
      writeFileSync(join(agent.dir, "web.hcl"), job("web", "service", staticPort, "wait"));
      expect((await agent.cli("job", "run", "-detach", join(agent.dir, "web.hcl"))).stderr).toBe("");
      const allocs = () => agent.get<Alloc[]>("/v1/job/web/allocations");
      const alloc = await waitFor("the alloc running", async () => (await allocs()).find((a) => a.ClientStatus === "running"), { timeoutMs: 60_000 });
      const full = await agent.get<{ AllocatedResources: { Shared: { Ports: { Label: string; Value: number; To: number }[] } } }>(`/v1/allocation/${alloc.ID}`);
      const port = (label: string) => full.AllocatedResources.Shared.Ports.find((p) => p.Label === label)!.Value;

      const env = await waitFor("the exec task's page on its static port", () => get(`http://127.0.0.1:${staticPort}/env.txt`));
      expect(await waitFor("dynamic port -> to 8081", () => get(`http://127.0.0.1:${port("dyn")}/same.txt`))).toBe("same\n");
      expect(await waitFor("dynamic port without to", () => get(`http://127.0.0.1:${port("same")}/same.txt`))).toBe("same\n");
      // The group's dns block is the exec task's /etc/resolv.conf.
      expect(await get(`http://127.0.0.1:${staticPort}/resolv.txt`)).toBe("nameserver 10.0.0.53\nsearch svc.internal\n");
      const vars = Object.fromEntries(env.trim().split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
      expect(vars).toMatchObject({
        NOMAD_PORT_web: "8080",
        NOMAD_ALLOC_PORT_web: "8080",
        NOMAD_HOST_PORT_web: String(staticPort),
        NOMAD_IP_web: "127.0.0.1",
        NOMAD_HOST_IP_web: "127.0.0.1",
        NOMAD_ADDR_web: `127.0.0.1:${staticPort}`,
        NOMAD_HOST_ADDR_web: `127.0.0.1:${staticPort}`,
        NOMAD_PORT_dyn: "8081",
        NOMAD_HOST_PORT_dyn: String(port("dyn")),
        NOMAD_PORT_same: String(port("same")),
      });

      // raw_exec runs in the same namespace (as Nomad's does): its 9090 is not the host's, the exec task reaches it on localhost.
      const fromExec = await waitFor("raw_exec's server, from inside the namespace", async () => {
        const out = await agent.cli("alloc", "exec", "-task", "web", alloc.ID, "/usr/bin/busybox", "wget", "-q", "-O", "-", "http://127.0.0.1:9090/raw.txt");
        return out.code === 0 ? out.stdout : null;
      });
      expect(fromExec).toBe("raw\n");
      // ... and a command exec'd into the raw_exec task runs in its namespace, as Nomad's executor runs it.
      const fromRaw = await agent.cli("alloc", "exec", "-task", "raw", alloc.ID, "/usr/bin/busybox", "wget", "-q", "-O", "-", "http://127.0.0.1:8080/same.txt");
      expect(fromRaw).toMatchObject({ code: 0, stdout: "same\n" });
      expect(await get("http://127.0.0.1:9090/raw.txt")).toBeNull();

      const address = (await run(["ip", "-n", alloc.ID, "-4", "-o", "addr", "show", "eth0"])).match(/inet (\S+)\//)![1]!;
      expect(existsSync(join(LEASES, address))).toBe(true);

      // An agent SIGKILL and restart keeps the namespace: the same tasks still answer.
      agent.process.kill("SIGKILL");
      await agent.process.exited;
      await agent.start();
      await waitFor("the alloc running after the restart", async () => (await allocs()).find((a) => a.ID === alloc.ID && a.ClientStatus === "running"));
      expect(await waitFor("the static port after the restart", () => get(`http://127.0.0.1:${staticPort}/env.txt`))).toBe(env);
      expect(await run(["ip", "-n", alloc.ID, "-4", "-o", "addr", "show", "eth0"])).toContain(`inet ${address}/`);

      expect((await agent.cli("job", "stop", "web")).code).toBe(0);
      await waitFor("the alloc stopped", async () => (await allocs()).every((a) => a.ClientStatus !== "running"));
      await waitFor("nothing left of the alloc's network", async () => ((await leftovers(alloc.ID, address, bridge)).length === 0 ? true : null));
      expect(await get(`http://127.0.0.1:${staticPort}/env.txt`)).toBeNull();
    }, 120_000);

    test("an alloc that ends while the agent is SIGKILLed is torn down by the next agent", async () => {
      const staticPort = await freePort();
      // The exec task ends once alloc/data/stop exists; the job is batch, so it is not restarted.
      writeFileSync(join(agent.dir, "ends.hcl"), job("ends", "batch", staticPort, "while [ ! -e /alloc/data/stop ]; do sleep 0.1; done"));
      expect((await agent.cli("job", "run", "-detach", join(agent.dir, "ends.hcl"))).stderr).toBe("");
      const allocs = () => agent.get<Alloc[]>("/v1/job/ends/allocations");
      const alloc = await waitFor("the alloc running", async () => (await allocs()).find((a) => a.ClientStatus === "running"), { timeoutMs: 60_000 });
      await waitFor("the static port", () => get(`http://127.0.0.1:${staticPort}/env.txt`));
      const address = (await run(["ip", "-n", alloc.ID, "-4", "-o", "addr", "show", "eth0"])).match(/inet (\S+)\//)![1]!;

      agent.process.kill("SIGKILL");
      await agent.process.exited;
      writeFileSync(join(agent.dataDir, "alloc", alloc.ID, "alloc", "data", "stop"), "");
      // The raw_exec task would run on: it is killed as the alloc's other task ends, once the agent is back.
      await agent.start();
      await waitFor("the alloc finished", async () => (await allocs()).find((a) => a.ID === alloc.ID && a.ClientStatus !== "running" && a.ClientStatus !== "pending"), { timeoutMs: 60_000 });
      await waitFor("nothing left of the alloc's network", async () => ((await leftovers(alloc.ID, address, bridge)).length === 0 ? true : null));
      expect(readdirSync("/var/run/netns")).not.toContain(alloc.ID);
    }, 120_000);

    test.skipIf(missing.length > 0)("a docker job from a registry is reached through its mapped port, with exec, logs, stats, its hostname, extra_hosts and dns_*; a stop leaves no mount, namespace or interface", async () => {
      const registry = await theRegistry();
      const staticPort = await freePort();
      writeFileSync(
        join(agent.dir, "docker.hcl"),
        `job "box" {
    group "g" {
      network {
        mode = "bridge"
        port "http" {
          static = ${staticPort}
          to     = 8080
        }
      }
      task "srv" {
        driver = "docker"
        config {
          image              = "${registry.host}/test/srv:1"
          ports              = ["http"]
          hostname           = "web-box"
          extra_hosts        = ["db.internal:10.9.8.7"]
          dns_servers        = ["10.0.0.53"]
          dns_search_domains = ["example.internal"]
          dns_options        = ["ndots:2"]
        }
      }
    }
  }`,
      );
      expect((await agent.cli("job", "run", "-detach", join(agent.dir, "docker.hcl"))).stderr).toBe("");
      const allocs = () => agent.get<Alloc[]>("/v1/job/box/allocations");
      const alloc = await waitFor("the alloc running", async () => (await allocs()).find((a) => a.ClientStatus === "running"), { timeoutMs: 60_000 });
      const etc = await waitFor("the container's files on its mapped port", () => get(`http://127.0.0.1:${staticPort}/etc.txt`));
      const address = (await run(["ip", "-n", alloc.ID, "-4", "-o", "addr", "show", "eth0"])).match(/inet (\S+)\//)![1]!;
      expect(etc).toContain("127.0.0.1 localhost\n");
      expect(etc).toContain(`${address} web-box\n`);
      expect(etc).toContain("10.9.8.7 db.internal\n");
      expect(etc).toContain("nameserver 10.0.0.53\nsearch example.internal\noptions ndots:2\n");
      expect(await get(`http://127.0.0.1:${staticPort}/hostname.txt`)).toBe("web-box\n");

      // What a Nomad user does next: exec into the container, read its logs and its usage.
      expect(await agent.cli("alloc", "exec", alloc.ID, "--", "cat", "/www/hostname.txt")).toMatchObject({ code: 0, stdout: "web-box\n" });
      expect(await waitFor("the container's stdout", async () => (await agent.cli("alloc", "logs", alloc.ID, "srv")).stdout || null)).toBe("serving on 8080\n");
      const stats = await waitFor("the container's stats", async () => {
        const body = await agent.get<{ ResourceUsage: { MemoryStats: { Usage: number } }; Tasks: Record<string, { Pids: Record<string, unknown> }> }>(`/v1/client/allocation/${alloc.ID}/stats`);
        return body.Tasks.srv && body.ResourceUsage.MemoryStats.Usage > 0 ? body : null;
      });
      expect(Object.keys(stats.Tasks.srv!.Pids).length).toBeGreaterThan(0);

      expect((await agent.cli("job", "stop", "box")).code).toBe(0);
      await waitFor("the alloc stopped", async () => (await allocs()).every((a) => a.ClientStatus !== "running"));
      await waitFor("nothing left of the alloc's network", async () => ((await leftovers(alloc.ID, address, bridge)).length === 0 ? true : null));
      await agent.executorsGone();
      const taskDir = join(agent.dataDir, "alloc", alloc.ID, "srv");
      expect(mountsUnder(taskDir).filter((point) => !point.endsWith("/secrets"))).toEqual([]);
      expect(readFileSync("/proc/self/mountinfo", "utf8")).not.toContain(`${taskDir}/.rootfs`);
    }, 120_000);
  });
}
