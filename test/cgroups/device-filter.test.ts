/**
 * The cgroup v2 device allow-list: a device program attached to a cgroup,
 * seen by a shell placed in it opening nodes it made itself (a block device
 * playing /dev/sda) and the host's.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, rmdirSync } from "node:fs";
import { join } from "node:path";
import { attachDeviceFilter, deviceProgram, parseDeviceRule } from "../../src/cgroups/device-filter.ts";
import { DEVICE_ALLOW_LIST } from "../../src/cgroups/devices.ts";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { capabilities, tempDir } from "../helpers/index.ts";

const layout = capabilities.cgroups;
const V2_TREE = layout.mode === "v2" ? layout.mount : layout.mode === "v1" ? layout.unified : undefined;

/** What each line of `script`, run by bash inside `cgroup`, printed. */
async function runIn(cgroup: string, script: string): Promise<string[]> {
  const child = spawnProcess({ argv: ["/bin/bash", "-c", `echo $$ > ${cgroup}/cgroup.procs; ${script}`], env: { PATH: "/usr/bin:/bin" }, stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  await child.exited;
  return `${out}${err}`.trim().split("\n");
}

describe("device rules", () => {
  test("are read in devices.allow's syntax; anything else is refused, naming the rule", () => {
    expect(parseDeviceRule("c 136:* rwm")).toEqual({ type: "c", major: 136, minor: "*", access: "rwm" });
    expect(parseDeviceRule("b *:* m")).toEqual({ type: "b", major: "*", minor: "*", access: "m" });
    expect(() => parseDeviceRule("c 1:3 rwx")).toThrow('device rule "c 1:3 rwx"');
  });

  test("become one test block per rule, ending in a refusal", () => {
    // 6 loads, then per rule: type, access (3), major, minor, allow (2); then refuse (2).
    expect(deviceProgram([parseDeviceRule("c 1:3 rw")]).length / 8).toBe(6 + 8 + 2);
    expect(deviceProgram([parseDeviceRule("a *:* rwm")]).length / 8).toBe(6 + 2 + 2);
  });
});

describe.skipIf(!capabilities.root || !V2_TREE)("a cgroup with the device program", () => {
  test("opens /dev/null, urandom and nodes of allowed kinds; refuses a disk and other devices", async () => {
    const cgroup = join(V2_TREE!, `drover-device-filter-test-${process.pid}`);
    const nodes = tempDir("drover-device-filter-");
    mkdirSync(cgroup);
    try {
      const made = await runIn(cgroup, `mknod ${nodes}/sda b 8 0 && mknod ${nodes}/null c 1 3 && mknod ${nodes}/mem c 1 1 && echo made`);
      expect(made).toEqual(["made"]);
      const script = `echo x > /dev/null && head -c 1 /dev/urandom > /dev/null && echo host-nodes; echo x > ${nodes}/null && echo own-null; head -c 1 ${nodes}/sda > /dev/null; head -c 1 ${nodes}/mem > /dev/null`;
      // Without the program, the disk node gets past the open's permission check (to the driver, or no driver: ENXIO).
      expect((await runIn(cgroup, script)).join("\n")).not.toContain(`'${nodes}/sda' for reading: Operation not permitted`);
      attachDeviceFilter(cgroup, DEVICE_ALLOW_LIST);
      expect(await runIn(cgroup, script)).toEqual([
        "host-nodes",
        "own-null",
        `head: cannot open '${nodes}/sda' for reading: Operation not permitted`,
        `head: cannot open '${nodes}/mem' for reading: Operation not permitted`,
      ]);
    } finally {
      rmdirSync(cgroup);
    }
  });
});
