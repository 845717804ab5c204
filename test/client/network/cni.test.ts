/**
 * The CNI protocol as drover speaks it to plugins, against stand-in plugins
 * that record what they were given: environment, stdin config, prevResult,
 * runtimeConfig by capability, ADD in order, DEL in reverse and to the end.
 * The real plugins are driven by test/e2e/bridge-network.test.ts.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CniRunner, type NetworkConfigList } from "../../../src/client/network/cni.ts";
import { bridgeConfigList, portMappings } from "../../../src/client/network/bridge.ts";
import type { Allocation } from "../../../src/structs/alloc.ts";
import { tempDir } from "../../helpers/index.ts";

const dir = tempDir("drover-cni-");
const log = join(dir, "calls.log");

/** A plugin that logs its call (env, then stdin) and answers `answer` (or fails with a CNI error object). */
function plugin(name: string, answer: string, exitCode = 0): void {
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\n{ echo "${name} $CNI_COMMAND $CNI_CONTAINERID $CNI_NETNS $CNI_IFNAME $CNI_PATH"; cat; echo; } >> ${log}\necho '${answer}'\nexit ${exitCode}\n`);
  chmodSync(file, 0o755);
}

const RESULT = { cniVersion: "0.4.0", interfaces: [{ name: "eth0", sandbox: "/var/run/netns/x" }], ips: [{ address: "10.1.2.3/24", interface: 0 }] };
plugin("first", JSON.stringify(RESULT));
plugin("second", JSON.stringify({ ...RESULT, dns: { nameservers: ["10.0.0.53"] } }));
plugin("broken", JSON.stringify({ code: 7, msg: "cannot do it", details: "no table" }), 1);
plugin("garbled", "starting up...");

const list: NetworkConfigList = { cniVersion: "0.4.0", name: "net", plugins: [{ type: "first", option: 1 }, { type: "second", capabilities: { portMappings: true } }] };
const at = { containerId: "alloc-1", netns: "/var/run/netns/alloc-1", ifName: "eth0", runtimeConfig: { portMappings: [{ hostPort: 1, containerPort: 2, protocol: "tcp" }], other: true } };

function calls(): { line: string; config: Record<string, unknown> }[] {
  const lines = readFileSync(log, "utf8").trim().split("\n");
  const out = [];
  for (let i = 0; i < lines.length; i += 2) out.push({ line: lines[i]!, config: JSON.parse(lines[i + 1]!) as Record<string, unknown> });
  writeFileSync(log, "");
  return out;
}

describe("the CNI protocol", () => {
  test("ADD calls the plugins in order, each with the previous result; runtimeConfig goes only where a capability asks", async () => {
    const runner = new CniRunner(`/nonexistent:${dir}`);
    const result = await runner.add(list, at);
    expect(result.dns).toEqual({ nameservers: ["10.0.0.53"] });
    const [first, second] = calls();
    expect(first!.line).toBe(`first ADD alloc-1 /var/run/netns/alloc-1 eth0 /nonexistent:${dir}`);
    expect(first!.config).toEqual({ type: "first", option: 1, cniVersion: "0.4.0", name: "net" });
    expect(second!.line).toStartWith("second ADD alloc-1");
    expect(second!.config).toEqual({ type: "second", capabilities: { portMappings: true }, cniVersion: "0.4.0", name: "net", prevResult: RESULT, runtimeConfig: { portMappings: at.runtimeConfig.portMappings } });
  });

  test("DEL calls every plugin in reverse with the kept result, and reports the first failure after the rest ran", async () => {
    const runner = new CniRunner(dir);
    const withBroken: NetworkConfigList = { ...list, plugins: [list.plugins[0]!, { type: "broken" }, list.plugins[1]!] };
    await expect(runner.del(withBroken, at, RESULT)).rejects.toThrow("CNI plugin broken DEL failed: cannot do it: no table");
    const made = calls();
    expect(made.map((call) => call.line.split(" ").slice(0, 2).join(" "))).toEqual(["second DEL", "broken DEL", "first DEL"]);
    expect(made.every((call) => JSON.stringify(call.config.prevResult) === JSON.stringify(RESULT))).toBe(true);
  });

  test("an ADD answer that is no CNI result names the plugin", async () => {
    const runner = new CniRunner(dir);
    await expect(runner.add({ ...list, plugins: [list.plugins[0]!, { type: "garbled" }] }, at)).rejects.toThrow("CNI plugin garbled ADD answered no CNI result: starting up...");
    calls();
  });

  test("a plugin that fails with megabytes of output (or answers them) is quoted by its last 4 KiB, saying how much was cut", async () => {
    const size = 1 << 20;
    const noisy = (name: string, to: "1" | "2", exitCode = 1) => {
      const file = join(dir, name);
      writeFileSync(file, `#!/bin/sh\ncat > /dev/null\nhead -c ${size} /dev/zero | tr '\\0' x >&${to}\nprintf "the reason" >&${to}\nexit ${exitCode}\n`);
      chmodSync(file, 0o755);
    };
    noisy("noisy-stderr", "2");
    noisy("noisy-stdout", "1");
    noisy("noisy-answer", "1", 0);
    const reason = "the reason";
    const quoted = `[${size + reason.length - 4096} bytes cut] ${"x".repeat(4096 - reason.length)}${reason}`;
    const runner = new CniRunner(dir);
    for (const type of ["noisy-stderr", "noisy-stdout"]) {
      await expect(runner.add({ ...list, plugins: [{ type }] }, at)).rejects.toThrow(new Error(`CNI plugin ${type} ADD failed: ${quoted}`));
    }
    await expect(runner.add({ ...list, plugins: [{ type: "noisy-answer" }] }, at)).rejects.toThrow(new Error(`CNI plugin noisy-answer ADD answered no CNI result: ${quoted}`));
  });

  test("a plugin missing from the path is named", async () => {
    await expect(new CniRunner(dir).add({ ...list, plugins: [{ type: "bridge-nope" }] }, at)).rejects.toThrow(`CNI plugin "bridge-nope" not found in ${dir}`);
  });
});

describe("Nomad's bridge conflist", () => {
  test("the client's bridge and subnet; each group port mapped for tcp and udp, to its `to` or itself", () => {
    const conf = bridgeConfigList({ bridgeName: "br-test", subnet: "10.9.0.0/24", cniPath: dir });
    expect(conf.plugins.map((p) => p.type)).toEqual(["loopback", "bridge", "firewall", "portmap"]);
    expect(conf.plugins[1]).toMatchObject({ bridge: "br-test", ipMasq: true, isGateway: true, ipam: { type: "host-local", ranges: [[{ subnet: "10.9.0.0/24" }]] } });
    expect(conf.plugins[3]).toMatchObject({ capabilities: { portMappings: true }, snat: true });
    const alloc = { AllocatedResources: { Shared: { Ports: [{ Label: "a", Value: 25000, To: 8080, HostIP: "127.0.0.1" }, { Label: "b", Value: 25001, To: 0, HostIP: "127.0.0.1" }], Networks: [] } } } as unknown as Allocation;
    expect(portMappings(alloc)).toEqual([
      { hostPort: 25000, containerPort: 8080, protocol: "tcp", hostIP: "127.0.0.1" },
      { hostPort: 25000, containerPort: 8080, protocol: "udp", hostIP: "127.0.0.1" },
      { hostPort: 25001, containerPort: 25001, protocol: "tcp", hostIP: "127.0.0.1" },
      { hostPort: 25001, containerPort: 25001, protocol: "udp", hostIP: "127.0.0.1" },
    ]);
  });
});
