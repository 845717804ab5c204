/**
 * Device nodes and plugin mounts in an isolated task's root: what a device
 * plugin's reservation gives an exec task (a GPU's /dev/nvidia<N>), seen from
 * inside. Host nodes stand in for GPUs: /dev/zero plays /dev/nvidia0.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { EXIT_SETUP_FAILED } from "../../src/nsenter/errors.ts";
import { IsolationSpecSchema } from "../../src/nsenter/spec.ts";
import { capabilities, tempDir } from "../helpers/index.ts";
import { allocLayout, isolationSpec, killStarted, runScript } from "./fixture.ts";

afterEach(killStarted);

/** Where the v1 devices hierarchy is mounted, where a cgroup can deny devices (v2 has none). */
const DEVICES_HIERARCHY = readFileSync("/proc/self/mounts", "utf8")
  .split("\n")
  .map((line) => line.split(" "))
  .find(([, , type, options]) => type === "cgroup" && options?.split(",").includes("devices"))?.[1];
if (!DEVICES_HIERARCHY) console.log("skipping the devices cgroup test: no v1 devices hierarchy is mounted");

/** A v2 cgroup directory's parent (a v2 host's mount, a hybrid host's unified tree), where a device program can deny devices. */
const layout = capabilities.cgroups;
const V2_TREE = layout.mode === "v2" ? layout.mount : layout.mode === "v1" ? layout.unified : undefined;
if (!V2_TREE) console.log("skipping the device program test: no cgroup v2 tree is mounted");

const major = (rdev: number) => Math.floor(rdev / 256) & 0xfff;
const minor = (rdev: number) => (rdev & 0xff) | ((rdev >> 12) & 0xfff00);

describe.skipIf(!capabilities.root)("a task's device nodes", () => {
  test("are the host's nodes, usable at the path the plugin names, under /dev only", async () => {
    const zero = statSync("/dev/zero");
    const devices = [
      { taskPath: "/dev/nvidia0", hostPath: "/dev/zero", permissions: "rwm" },
      { taskPath: "/dev/dri/card0", hostPath: "/dev/null", permissions: "rw" },
    ];
    const result = await runScript(allocLayout(), "stat -c '%t:%T %F' /dev/nvidia0; head -c 4 /dev/nvidia0 | od -An -tx1; echo x > /dev/dri/card0 && echo wrote", { devices });
    expect(result.stderr).toBe("");
    const [kind, bytes, wrote] = result.stdout.trim().split("\n").map((line) => line.trim());
    expect(kind).toBe(`${major(zero.rdev).toString(16)}:${minor(zero.rdev).toString(16)} character special file`);
    expect(bytes).toBe("00 00 00 00");
    expect(wrote).toBe("wrote");
  });

  test("are absent for a task given none", async () => {
    const result = await runScript(allocLayout(), "ls /dev");
    expect(result.stdout.split("\n")).not.toContain("nvidia0");
  });

  test("a node the host lacks fails the start, naming it", async () => {
    const result = await runScript(allocLayout(), "true", { devices: [{ taskPath: "/dev/nvidia7", hostPath: "/dev/drover-no-such-gpu", permissions: "rwm" }] });
    expect(result.exitCode).toBe(EXIT_SETUP_FAILED);
    expect(result.stderr).toContain("device /dev/drover-no-such-gpu is not a device node on the host");
  });

  test.skipIf(!DEVICES_HIERARCHY)("are let through a devices cgroup that denies every other device", async () => {
    const cgroup = join(DEVICES_HIERARCHY!, `drover-nsenter-devices-test-${process.pid}`);
    mkdirSync(cgroup);
    try {
      writeFileSync(join(cgroup, "devices.deny"), "a");
      writeFileSync(join(cgroup, "devices.allow"), "c 1:3 rwm");
      // /dev/full plays the GPU, readable only: a write is refused by the cgroup (EPERM), not by the device (ENOSPC).
      const devices = [{ taskPath: "/dev/nvidia0", hostPath: "/dev/full", permissions: "r" }];
      const result = await runScript(allocLayout(), "head -c 2 /dev/nvidia0 | od -An -tx1; echo x 2>&1 > /dev/nvidia0", { cgroups: [cgroup], devices, user: "root" });
      const [read, write] = result.stdout.trim().split("\n").map((line) => line.trim());
      expect(read).toBe("00 00");
      expect(write).toContain("Operation not permitted");
      const full = statSync("/dev/full");
      expect(readFileSync(join(cgroup, "devices.list"), "utf8").split("\n")).toContain(`c ${major(full.rdev)}:${minor(full.rdev)} r`);
    } finally {
      rmdirSync(cgroup);
    }
  });

  test.skipIf(!V2_TREE || !existsSync("/dev/loop0"))("on cgroup v2, a device program lets the usual nodes and the task's own through, as granted", async () => {
    const cgroup = join(V2_TREE!, `drover-nsenter-device-program-test-${process.pid}`);
    mkdirSync(cgroup);
    try {
      // A node outside the usual list plays a GPU granted read-only: a loop device, opened for writing but never written (`true >`).
      const devices = [{ taskPath: "/dev/nvidia0", hostPath: "/dev/loop0", permissions: "r" }];
      const script = "head -c 2 /dev/nvidia0 2>&1 > /dev/null && echo read; true 2>&1 > /dev/nvidia0; echo x > /dev/null && echo null; head -c 1 /dev/urandom > /dev/null && echo urandom";
      const result = await runScript(allocLayout(), script, { cgroups: [cgroup], devices, user: "root" });
      expect(result.stdout.trim().split("\n")).toEqual(["read", expect.stringContaining("Operation not permitted"), "null", "urandom"]);
    } finally {
      rmdirSync(cgroup);
    }
  });

  test("plugin mounts are bound where the plugin says, read-only when asked", async () => {
    const host = tempDir("drover-plugin-mount-");
    mkdirSync(join(host, "lib"));
    writeFileSync(join(host, "lib", "libcuda.so.1"), "fake");
    const mounts = [{ taskPath: "/opt/nvidia", hostPath: join(host, "lib"), readOnly: true }];
    const result = await runScript(allocLayout(), "cat /opt/nvidia/libcuda.so.1; echo; touch /opt/nvidia/x 2>&1", { mounts, user: "root" });
    expect(result.stdout).toContain("fake\n");
    expect(result.stdout).toContain("Read-only file system");
  });
});

test("the spec refuses device paths outside /dev and mounts over the task's own dirs", () => {
  const layout = { root: "/r", allocDir: "/r/alloc", taskDir: "/r/web" };
  const problems = (overrides: object) => v.safeParse(IsolationSpecSchema, isolationSpec(layout, overrides)).issues?.map((issue) => issue.message) ?? [];
  expect(problems({ devices: [{ taskPath: "/etc/nvidia0", hostPath: "/dev/nvidia0", permissions: "rwm" }] })).toEqual(["must be a path under /dev"]);
  expect(problems({ devices: [{ taskPath: "/dev/nvidia0", hostPath: "/dev/nvidia0", permissions: "rwx" }] })).toEqual(['must be letters of "rwm"']);
  expect(problems({ mounts: [{ taskPath: "/local/x", hostPath: "/usr/lib", readOnly: true }] })[0]).toStartWith("must not be /, nor on, under or above /alloc");
  expect(problems({ devices: [{ taskPath: "/dev/nvidia0", hostPath: "/dev/nvidia0", permissions: "rwm" }] })).toEqual([]);
});
