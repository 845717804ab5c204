import { describe, expect, test } from "bun:test";
import { cgroupDirs, normalizeParent, parentCgroupDirs, taskCgroupPaths, taskOfLeaf } from "../../src/cgroups/paths.ts";
import { cpuShares, memoryLimits, sharesToWeight } from "../../src/cgroups/limits.ts";

const V1 = {
  mode: "v1" as const,
  mounts: { memory: "/sys/fs/cgroup/memory", cpu: "/sys/fs/cgroup/cpu,cpuacct", cpuacct: "/sys/fs/cgroup/cpu,cpuacct", pids: "/sys/fs/cgroup/pids", devices: "/sys/fs/cgroup/devices" },
  others: ["/sys/fs/cgroup/systemd"],
  unified: "/sys/fs/cgroup/unified",
};
const V2 = { mode: "v2" as const, mount: "/sys/fs/cgroup", controllers: ["cpu", "memory", "pids"] };

describe("task cgroup paths", () => {
  test("v1: one directory per hierarchy under the parent, co-mounted controllers sharing one, the hybrid v2 tree too", () => {
    const paths = taskCgroupPaths(V1, "drover", "a1b2", "web");
    expect(paths).toEqual({
      version: "v1",
      dirs: {
        memory: "/sys/fs/cgroup/memory/drover/a1b2.web",
        cpu: "/sys/fs/cgroup/cpu,cpuacct/drover/a1b2.web",
        cpuacct: "/sys/fs/cgroup/cpu,cpuacct/drover/a1b2.web",
        pids: "/sys/fs/cgroup/pids/drover/a1b2.web",
        freezer: undefined,
        cpuset: undefined,
        devices: "/sys/fs/cgroup/devices/drover/a1b2.web",
        blkio: undefined,
      },
      others: ["/sys/fs/cgroup/systemd/drover/a1b2.web"],
      unified: "/sys/fs/cgroup/unified/drover/a1b2.web",
    });
    expect(cgroupDirs(paths!)).toEqual([
      "/sys/fs/cgroup/memory/drover/a1b2.web",
      "/sys/fs/cgroup/cpu,cpuacct/drover/a1b2.web",
      "/sys/fs/cgroup/pids/drover/a1b2.web",
      "/sys/fs/cgroup/devices/drover/a1b2.web",
      "/sys/fs/cgroup/systemd/drover/a1b2.web",
      "/sys/fs/cgroup/unified/drover/a1b2.web",
    ]);
    expect(parentCgroupDirs(V1, "drover")).toEqual([
      "/sys/fs/cgroup/memory/drover",
      "/sys/fs/cgroup/cpu,cpuacct/drover",
      "/sys/fs/cgroup/pids/drover",
      "/sys/fs/cgroup/devices/drover",
      "/sys/fs/cgroup/systemd/drover",
      "/sys/fs/cgroup/unified/drover",
    ]);
  });

  test("v1, a raw_exec task: the limiting and measuring hierarchies and the v2 tree; no devices allow-list", () => {
    const isolated = taskCgroupPaths(V1, "drover", "a1b2", "web");
    if (isolated?.version !== "v1") throw new Error("expected v1 paths");
    const { cpuset: _cpuset, devices: _devices, blkio: _blkio, ...limiting } = isolated.dirs;
    expect(taskCgroupPaths(V1, "drover", "a1b2", "web", "accounting")).toEqual({ ...isolated, dirs: limiting, others: [] });
  });

  test("v2: a scope under the parent's slice", () => {
    expect(taskCgroupPaths(V2, "/drover", "a1b2", "web")).toEqual({ version: "v2", dir: "/sys/fs/cgroup/drover.slice/a1b2.web.scope" });
    expect(taskCgroupPaths(V2, "custom.slice", "a1b2", "web")).toEqual({ version: "v2", dir: "/sys/fs/cgroup/custom.slice/a1b2.web.scope" });
  });

  test("task names cannot climb out of the parent, and a parent with .. is refused", () => {
    const paths = taskCgroupPaths(V2, "drover", "a1b2", "../../etc");
    expect(paths).toEqual({ version: "v2", dir: "/sys/fs/cgroup/drover.slice/a1b2...%2f..%2fetc.scope" });
    expect(() => normalizeParent("drover/../..")).toThrow('client.cgroup_parent "drover/../..": must not contain ".."');
    expect(() => normalizeParent("/")).toThrow("must name a cgroup below the root");
  });

  test("no cgroups: no paths", () => {
    expect(taskCgroupPaths({ mode: "none", reason: "x" }, "drover", "a", "b")).toBeNull();
  });
});

describe("cgroup limits from a task's resources", () => {
  test("MemoryMB is the limit; MemoryMaxMB raises it and makes MemoryMB the soft limit", () => {
    expect(memoryLimits({ cpuMhz: 0, memoryMb: 256, memoryMaxMb: 0, pidsLimit: 0 })).toEqual({ limitBytes: 256 * 2 ** 20, softBytes: null });
    expect(memoryLimits({ cpuMhz: 0, memoryMb: 256, memoryMaxMb: 512, pidsLimit: 0 })).toEqual({ limitBytes: 512 * 2 ** 20, softBytes: 256 * 2 ** 20 });
    expect(memoryLimits({ cpuMhz: 0, memoryMb: 0, memoryMaxMb: 0, pidsLimit: 0 })).toEqual({ limitBytes: null, softBytes: null });
  });

  test("CPU MHz are v1 shares (at least 2) and map to v2 weights like runc", () => {
    expect(cpuShares({ cpuMhz: 500, memoryMb: 0, memoryMaxMb: 0, pidsLimit: 0 })).toBe(500);
    expect(cpuShares({ cpuMhz: 1, memoryMb: 0, memoryMaxMb: 0, pidsLimit: 0 })).toBe(2);
    expect(cpuShares({ cpuMhz: 0, memoryMb: 0, memoryMaxMb: 0, pidsLimit: 0 })).toBeNull();
    expect(sharesToWeight(2)).toBe(1);
    expect(sharesToWeight(1024)).toBe(39);
    expect(sharesToWeight(262144)).toBe(10000);
  });
});

describe("a leaf's name read back", () => {
  test("gives the alloc and the task, whatever the task's name holds", () => {
    for (const taskName of ["web", "web%1", "wéb ɑ1", "../x", "a.b"]) {
      for (const layout of [V1, V2] as const) {
        const paths = taskCgroupPaths(layout, "drover", "a1b2c3d4-e5", taskName)!;
        const leaf = cgroupDirs(paths)[0]!.split("/").pop()!;
        expect(taskOfLeaf(leaf)).toEqual({ allocId: "a1b2c3d4-e5", taskName });
      }
    }
    for (const other of ["drover.slice", "cgroup.procs", "memory.max"]) expect(taskOfLeaf(other)).toBeNull();
  });
});
