/** The network hook where bridge networks cannot be built, and for groups that do not ask for one. */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { networkHook } from "../../../src/client/allocrunner/hooks/network.ts";
import type { AllocHookContext } from "../../../src/client/allocrunner/hooks/hook.ts";
import type { Allocation } from "../../../src/structs/alloc.ts";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ADMIN_CHAIN, BridgeNetwork } from "../../../src/client/network/bridge.ts";
import { deleteNetns, netnsPath } from "../../../src/client/network/netns.ts";
import { runTool } from "../../../src/runtime/spawn.ts";
import { tempDir } from "../../helpers/index.ts";

function context(mode: string): { ctx: AllocHookContext; saved: unknown[] } {
  const saved: unknown[] = [];
  const alloc = { ID: "a1", AllocatedResources: { Shared: { Ports: [], Networks: [{ Mode: mode }] } } } as unknown as Allocation;
  const ctx = { alloc, network: { networkRecord: () => undefined, recordNetwork: (record: unknown) => saved.push(record) } } as unknown as AllocHookContext;
  return { ctx, saved };
}

describe("the network hook", () => {
  const hook = networkHook({ bridge: null, unavailable: "the kernel has no bridge module loaded (modprobe bridge)", logger: pino({ level: "silent" }) });

  test("a bridge group on a host without bridge support fails its setup, saying why", async () => {
    const { ctx, saved } = context("bridge");
    await expect(hook.prerun!(ctx)).rejects.toThrow('network mode "bridge" is not available on this client: the kernel has no bridge module loaded (modprobe bridge)');
    expect(saved).toEqual([]);
  });

  test("host and none groups: nothing made, nothing saved", async () => {
    for (const mode of ["host", "none"]) {
      const { ctx, saved } = context(mode);
      await hook.prerun!(ctx);
      await hook.postrun!(ctx);
      expect(saved).toEqual([]);
    }
  });
});

/**
 * A CNI ADD that fails midway (the bridge plugin made the veth, then firewall
 * exits non-zero), with a real namespace and stand-in plugins: the alloc's
 * setup fails naming the plugin, and its end (postrun) runs every plugin's DEL
 * and removes the namespace. Needs root and iproute2/iptables, as the agent does.
 */
const why = process.getuid?.() !== 0 ? "not root" : !existsSync("/usr/sbin/ip") || !existsSync("/usr/sbin/iptables") ? "no ip/iptables" : null;
describe.skipIf(why !== null)("a CNI ADD that fails midway", () => {
  const dir = tempDir("drover-cni-fail-");
  const log = join(dir, "calls.log");
  /** A plugin that logs its call; `failing` fails its ADD with a CNI error object. */
  const stub = (name: string, failing = false) => {
    const fail = failing ? `[ "$CNI_COMMAND" = ADD ] && { echo '${JSON.stringify({ code: 999, msg: "iptables said no" })}'; exit 1; }\n` : "";
    writeFileSync(join(dir, name), `#!/bin/sh\ncat >/dev/null\necho "${name} $CNI_COMMAND" >> ${log}\n${fail}echo '{}'\n`);
    chmodSync(join(dir, name), 0o755);
  };
  for (const name of ["loopback", "bridge", "portmap"]) stub(name);
  stub("firewall", true);

  test("fails the setup naming the plugin; postrun runs DEL and removes the namespace", async () => {
    const bridge = new BridgeNetwork({ bridgeName: "drvtest0", subnet: "172.31.250.0/24", cniPath: dir });
    const hook = networkHook({ bridge, unavailable: null, logger: pino({ level: "silent" }) });
    let record: unknown;
    const allocId = `drover-test-${process.pid}`;
    const alloc = { ID: allocId, AllocatedResources: { Shared: { Ports: [], Networks: [{ Mode: "bridge", DynamicPorts: [], ReservedPorts: [] }] } } } as unknown as Allocation;
    const ctx = { alloc, network: { networkRecord: () => record, recordNetwork: (r: unknown) => (record = r) } } as unknown as AllocHookContext;
    try {
      await expect(hook.prerun!(ctx)).rejects.toThrow("CNI plugin firewall ADD failed: iptables said no");
      expect(existsSync(netnsPath(allocId))).toBe(true);
      expect(record).toMatchObject({ netns: netnsPath(allocId) });
      await hook.postrun!(ctx);
      expect(existsSync(netnsPath(allocId))).toBe(false);
      expect(record).toBeUndefined();
      expect(readFileSync(log, "utf8").trim().split("\n")).toEqual([
        "loopback ADD", "bridge ADD", "firewall ADD",
        "portmap DEL", "firewall DEL", "bridge DEL", "loopback DEL",
      ]);
    } finally {
      await deleteNetns(allocId);
      await runTool(["iptables", "-w", "-t", "filter", "-D", ADMIN_CHAIN, "-o", "drvtest0", "-d", "172.31.250.0/24", "-j", "ACCEPT"]).catch(() => undefined);
    }
  });
});
