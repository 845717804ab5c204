import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { taskCgroupPaths } from "../../src/cgroups/paths.ts";
import { emptyCgroup, openTaskCgroup } from "../../src/cgroups/task-cgroup.ts";
import { tempDir } from "../helpers/index.ts";

/** A cgroup v2 tree in a temp dir: the kernel's files where the code reads them. */
function fakeMount(): string {
  const mount = join(tempDir("drover-cgv2-"), "cgroup");
  mkdirSync(join(mount, "drover.slice"), { recursive: true });
  writeFileSync(join(mount, "cgroup.controllers"), "cpuset cpu io memory pids\n");
  writeFileSync(join(mount, "drover.slice", "cgroup.controllers"), "cpu memory pids\n");
  return mount;
}

const read = (dir: string, name: string) => readFileSync(join(dir, name), "utf8");

describe("cgroup v2 task cgroup (fake tree)", () => {
  test("create enables every offered controller from the mount down and writes the limits", () => {
    const mount = fakeMount();
    const paths = taskCgroupPaths({ mode: "v2", mount, controllers: ["cpu", "memory", "pids"] }, "drover", "a1", "web")!;
    const cgroup = openTaskCgroup(paths);
    cgroup.create({ cpuMhz: 1024, memoryMb: 256, memoryMaxMb: 512, pidsLimit: 100 });
    const leaf = join(mount, "drover.slice", "a1.web.scope");
    expect(cgroup.spawnDir).toBe(leaf);
    expect(read(mount, "cgroup.subtree_control")).toBe("+cpuset +cpu +io +memory +pids");
    expect(read(join(mount, "drover.slice"), "cgroup.subtree_control")).toBe("+cpu +memory +pids");
    expect(read(leaf, "memory.max")).toBe(String(512 * 2 ** 20));
    expect(read(leaf, "memory.low")).toBe(String(256 * 2 ** 20));
    expect(read(leaf, "memory.swap.max")).toBe("0");
    expect(read(leaf, "cpu.weight")).toBe("39");
    expect(read(leaf, "pids.max")).toBe("100");

    const unlimited = openTaskCgroup(taskCgroupPaths({ mode: "v2", mount, controllers: ["cpu", "memory", "pids"] }, "drover", "a2", "web")!);
    unlimited.create({ cpuMhz: 0, memoryMb: 0, memoryMaxMb: 0, pidsLimit: 0 });
    expect(read(unlimited.spawnDir, "memory.max")).toBe("max");
    expect(read(unlimited.spawnDir, "pids.max")).toBe("max");
  });

  test("usage reads memory.stat, memory.current/peak and cpu.stat; Measured-relevant fields absent stay undefined", () => {
    const mount = fakeMount();
    const leaf = join(mount, "drover.slice", "a1.web.scope");
    mkdirSync(leaf);
    writeFileSync(join(leaf, "memory.stat"), "anon 1000\nfile 2000\nfile_mapped 300\nkernel 40\n");
    writeFileSync(join(leaf, "memory.current"), "5000\n");
    writeFileSync(join(leaf, "memory.peak"), "9000\n");
    writeFileSync(join(leaf, "cpu.stat"), "usage_usec 7\nuser_usec 5\nsystem_usec 2\nnr_periods 0\nnr_throttled 3\nthrottled_usec 11\n");
    writeFileSync(join(leaf, "memory.events"), "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
    const cgroup = openTaskCgroup({ version: "v2", dir: leaf });
    expect(cgroup.usage()).toEqual({
      memory: { rss: 1000, cache: 2000, swap: undefined, mappedFile: 300, usage: 5000, maxUsage: 9000, kernelUsage: 40 },
      cpu: { totalNs: 7000, userNs: 5000, systemNs: 2000, throttledPeriods: 3, throttledNs: 11000 },
    });
    expect(cgroup.oomKills()).toBe(1);
  });

  test("killAll writes cgroup.kill; emptyCgroup ends once cgroup.procs is empty", async () => {
    const mount = fakeMount();
    const leaf = join(mount, "drover.slice", "a1.web.scope");
    mkdirSync(leaf);
    writeFileSync(join(leaf, "cgroup.kill"), "");
    writeFileSync(join(leaf, "cgroup.procs"), "");
    const cgroup = openTaskCgroup({ version: "v2", dir: leaf });
    await cgroup.killAll();
    expect(read(leaf, "cgroup.kill")).toBe("1");
    expect(await emptyCgroup(cgroup, 100)).toEqual([]);
  });
});
