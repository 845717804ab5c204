import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cgroupDirs, taskCgroupPaths } from "../../src/cgroups/paths.ts";
import { emptyCgroup, openTaskCgroup } from "../../src/cgroups/task-cgroup.ts";
import { KILL_TIMEOUT_MS } from "../../src/executor/protocol.ts";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { capabilities, isRunning, waitFor } from "../helpers/index.ts";
import { testCgroupParent } from "../executor/fixtures.ts";

const layout = capabilities.cgroups;
const parent = testCgroupParent();
const read = (dir: string, name: string) => readFileSync(join(dir, name), "utf8").trim();

describe.skipIf(!capabilities.root || layout.mode !== "v1")("cgroup v1 task cgroup (real hierarchies)", () => {
  test("limits, joining every controller, usage, a frozen kill of the whole tree, removal", async () => {
    const paths = taskCgroupPaths(layout, parent, `v1-${process.pid}`, "web")!;
    if (paths.version !== "v1") throw new Error("expected v1 paths");
    const cgroup = openTaskCgroup(paths);
    cgroup.create({ cpuMhz: 300, memoryMb: 64, memoryMaxMb: 128, pidsLimit: 50 });
    const { memory, cpu, pids, freezer, cpuset, devices } = paths.dirs;
    expect(read(memory, "memory.limit_in_bytes")).toBe(String(128 * 2 ** 20));
    // A v1 cpuset starts empty and would refuse the task; it gets its parent's.
    if (cpuset) expect(read(cpuset, "cpuset.cpus")).toBe(read(join(cpuset, "../.."), "cpuset.cpus"));
    if (devices) expect(read(devices, "devices.list").split("\n")).toEqual(expect.arrayContaining(["c 1:3 rwm", "c 136:* rwm", "b *:* m"]));
    if (devices) expect(read(devices, "devices.list")).not.toContain("a *:* rwm");
    expect(read(memory, "memory.soft_limit_in_bytes")).toBe(String(64 * 2 ** 20));
    if (cpu) expect(read(cpu, "cpu.shares")).toBe("300");
    if (pids) expect(read(pids, "pids.max")).toBe("50");

    const child = spawnProcess({ argv: ["sh", "-c", "sleep 600 & sleep 600 & wait"], env: { PATH: "/usr/bin:/bin" }, cgroup: cgroup.spawnDir });
    cgroup.join(child.pid);
    // Every hierarchy the host mounts, so that none leaves the task at the host's root.
    const atHostRoot = readFileSync(`/proc/${child.pid}/cgroup`, "utf8").split("\n").filter((line) => line.endsWith(":/"));
    expect(atHostRoot).toEqual([]);
    for (const dir of cgroupDirs(paths)) expect(read(dir, "cgroup.procs").split("\n")).toContain(String(child.pid));
    // Compared once the shell has forked both sleeps: counts read mid-fork differ between hierarchies.
    await waitFor("the shell and its two sleeps", () => cgroup.procs().length === 3);
    if (freezer) expect(read(freezer, "cgroup.procs").split("\n").length).toBe(cgroup.procs().length);
    const usage = cgroup.usage();
    expect(usage.memory.usage).toBeGreaterThan(0);
    expect(usage.cpu.totalNs).toBeNumber();

    const members = cgroup.procs();
    expect(await emptyCgroup(cgroup, KILL_TIMEOUT_MS)).toEqual([]);
    await child.exited;
    for (const pid of members) expect(isRunning(pid)).toBe(false);
    expect(cgroup.oomKills()).toBe(0);
    cgroup.remove();
    for (const dir of cgroupDirs(paths)) expect(existsSync(dir)).toBe(false);
  });

  test("a new cgroup keeps the kernel's defaults it was not asked to change; one an earlier run left gets every value again", () => {
    const paths = taskCgroupPaths(layout, parent, `v1-defaults-${process.pid}`, "web", "accounting")!;
    if (paths.version !== "v1") throw new Error("expected v1 paths");
    const { memory, pids } = paths.dirs;
    const cgroup = openTaskCgroup(paths);
    cgroup.create({ cpuMhz: 100, memoryMb: 64, memoryMaxMb: 0, pidsLimit: 0 });
    const unlimited = read(join(memory, ".."), "memory.soft_limit_in_bytes");
    expect(read(memory, "memory.limit_in_bytes")).toBe(String(64 * 2 ** 20));
    expect(read(memory, "memory.soft_limit_in_bytes")).toBe(unlimited);
    if (pids) expect(read(pids, "pids.max")).toBe("max");
    // The same task's cgroup again, as an earlier run left it: every value is written.
    cgroup.create({ cpuMhz: 100, memoryMb: 64, memoryMaxMb: 256, pidsLimit: 20 });
    expect(read(memory, "memory.soft_limit_in_bytes")).toBe(String(64 * 2 ** 20));
    if (pids) expect(read(pids, "pids.max")).toBe("20");
    cgroup.create({ cpuMhz: 100, memoryMb: 32, memoryMaxMb: 0, pidsLimit: 0 });
    expect(read(memory, "memory.limit_in_bytes")).toBe(String(32 * 2 ** 20));
    expect(read(memory, "memory.soft_limit_in_bytes")).toBe(unlimited);
    if (pids) expect(read(pids, "pids.max")).toBe("max");
    cgroup.remove();
  });
});
