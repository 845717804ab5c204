import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { cpus, hostname } from "node:os";
import { join } from "node:path";
import * as v from "valibot";
import { AgentConfigSchema } from "../../src/config/schema.ts";
import { fingerprint } from "../../src/client/fingerprint/index.ts";
import { parseCpuinfo } from "../../src/client/fingerprint/cpu.ts";
import { loadOrCreateNodeId } from "../../src/client/fingerprint/node-id.ts";
import { capabilities, tempDir } from "../helpers/index.ts";

const config = v.parse(AgentConfigSchema, {});

describe("fingerprint", () => {
  test("reports this host under Nomad's attribute names", () => {
    const dataDir = tempDir();
    const node = fingerprint(config, join(dataDir, "client"), join(dataDir, "alloc"));
    const memTotalKb = Number(/MemTotal:\s+(\d+)/.exec(readFileSync("/proc/meminfo", "utf8"))![1]);
    expect(node.attributes["kernel.name"]).toBe("linux");
    expect(node.attributes["unique.hostname"]).toBe(hostname());
    expect(Number(node.attributes["cpu.numcores"])).toBe(cpus().length);
    expect(Number(node.attributes["cpu.totalcompute"])).toBe(node.resources.cpuMhz);
    expect(Number(node.attributes["memory.totalbytes"])).toBe(memTotalKb * 1024);
    expect(node.resources.memoryMb).toBe(Math.floor(memTotalKb / 1024));
    expect(node.attributes["unique.storage.volume"]).toBe(join(dataDir, "alloc"));
    expect(node.attributes["unique.cgroup.version"]).toBe(capabilities.cgroups.mode === "none" ? undefined : capabilities.cgroups.mode);
  });

  test("config overrides the measured capacity", () => {
    const dataDir = tempDir();
    const custom = v.parse(AgentConfigSchema, { client: { cpu_total_compute: 1234, memory_total_mb: 2048 } });
    const node = fingerprint(custom, join(dataDir, "client"), join(dataDir, "alloc"));
    expect(node.resources.cpuMhz).toBe(1234);
    expect(node.resources.memoryMb).toBe(2048);
    expect(node.attributes["cpu.totalcompute"]).toBe("1234");
  });

  test("the node ID is made once and kept in the data dir", () => {
    const dataDir = tempDir();
    const first = loadOrCreateNodeId(join(dataDir, "client"));
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(readFileSync(join(dataDir, "client", "client-id"), "utf8").trim()).toBe(first);
    expect(loadOrCreateNodeId(join(dataDir, "client"))).toBe(first);
  });

  test("a damaged node ID file is reported, not replaced", () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, "client"));
    writeFileSync(join(dataDir, "client", "client-id"), "garbage");
    expect(() => loadOrCreateNodeId(join(dataDir, "client"))).toThrow(/does not hold a node ID/);
    expect(readFileSync(join(dataDir, "client", "client-id"), "utf8")).toBe("garbage");
  });

  test("host volumes become the node's, by name; a path that is missing or not a directory stops start-up naming it", () => {
    const dataDir = tempDir();
    mkdirSync(join(dataDir, "shared"));
    writeFileSync(join(dataDir, "file"), "");
    const withVolumes = (volumes: Record<string, unknown>) => v.parse(AgentConfigSchema, { client: { host_volume: volumes } });
    const node = fingerprint(withVolumes({ shared: { path: join(dataDir, "shared"), read_only: true } }), join(dataDir, "client"), join(dataDir, "alloc"));
    expect(node.hostVolumes).toEqual({ shared: { Name: "shared", Path: join(dataDir, "shared"), ReadOnly: true } });
    expect(() => fingerprint(withVolumes({ gone: { path: join(dataDir, "gone") } }), join(dataDir, "client"), join(dataDir, "alloc"))).toThrow(
      `client.host_volume "gone": path ${join(dataDir, "gone")}: does not exist`,
    );
    expect(() => fingerprint(withVolumes({ file: { path: join(dataDir, "file") } }), join(dataDir, "client"), join(dataDir, "alloc"))).toThrow(
      `client.host_volume "file": path ${join(dataDir, "file")} is not a directory`,
    );
  });

  test("cpuinfo parsing takes the model, the fastest core and the processor count", () => {
    const parsed = parseCpuinfo("processor\t: 0\nmodel name\t: Test CPU\ncpu MHz\t\t: 2000.5\n\nprocessor\t: 1\nmodel name\t: Test CPU\ncpu MHz\t\t: 2400.2\n");
    expect(parsed).toEqual({ modelName: "Test CPU", mhz: 2400, processors: 2 });
  });
});
