import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detectCgroups, ownCgroupPaths } from "../../src/cgroups/detect.ts";
import { parseMountinfo } from "../../src/lib/procfs.ts";
import { tempDir } from "../helpers/index.ts";

const HYBRID = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
38 31 0:35 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
42 31 0:39 / /sys/fs/cgroup/perf_event rw,relatime - cgroup cgroup rw,perf_event
43 1 0:36 / /mnt/pids-again rw,relatime - cgroup cgroup rw,pids
`;

describe("cgroup detection", () => {
  const dir = tempDir();
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  test("a hybrid host uses its v1 hierarchies, and records every other one and the v2 tree to place tasks in", () => {
    const unified = join(dir, "unified");
    mkdirSync(unified);
    writeFileSync(join(unified, "cgroup.controllers"), "hugetlb\n");
    const layout = detectCgroups(write("hybrid", HYBRID.replace("/sys/fs/cgroup/unified", unified)));
    expect(layout).toEqual({
      mode: "v1",
      mounts: {
        cpu: "/sys/fs/cgroup/cpu",
        cpuacct: "/sys/fs/cgroup/cpuacct",
        memory: "/sys/fs/cgroup/memory",
        freezer: "/sys/fs/cgroup/freezer",
        cpuset: "/sys/fs/cgroup/cpuset",
        pids: "/sys/fs/cgroup/pids",
      },
      // A hierarchy mounted twice (pids at /mnt/pids-again) counts once.
      others: ["/sys/fs/cgroup/systemd", "/sys/fs/cgroup/perf_event"],
      unified,
    });
  });

  test("a pure v2 host whose root offers memory uses v2", () => {
    const root = join(dir, "v2root");
    mkdirSync(root);
    writeFileSync(join(root, "cgroup.controllers"), "cpuset cpu io memory pids\n");
    const layout = detectCgroups(write("v2", `30 23 0:26 / ${root} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n`));
    expect(layout).toEqual({ mode: "v2", mount: root, controllers: ["cpuset", "cpu", "io", "memory", "pids"] });
  });

  test("no usable hierarchy says why", () => {
    const layout = detectCgroups(write("none", "22 1 0:5 / /proc rw - proc proc rw\n"));
    expect(layout.mode).toBe("none");
    expect(layout.mode === "none" && layout.reason).toContain("memory");
  });

  test("co-mounted v1 controllers and escaped mount points", () => {
    const mounts = parseMountinfo("32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n40 1 0:1 / /mnt/with\\040space rw - ext4 /dev/x rw\n");
    expect(mounts[0]!.superOptions).toEqual(["rw", "cpu", "cpuacct"]);
    expect(mounts[1]!.mountPoint).toBe("/mnt/with space");
  });

  test("own cgroup paths per controller", () => {
    const paths = ownCgroupPaths(write("self", "4:memory:/process_api/abc\n2:cpu,cpuacct:/\n0::/x\n"));
    expect(paths.get("memory")).toBe("/process_api/abc");
    expect(paths.get("cpuacct")).toBe("/");
    expect(paths.get("")).toBe("/x");
  });
});
