/** Where each driver's task gets its network from (drivers/network.ts). */
import { describe, expect, test } from "bun:test";
import * as v from "valibot";
import { networkOf, rawExecArgv } from "../../src/drivers/network.ts";
import { UTIL_LINUX_NSENTER as NSENTER } from "../../src/lib/bridge-network.ts";
import { TaskConfigSchema, type TaskConfig } from "../../src/drivers/driver.ts";
import { lookupUser } from "../../src/executor/user.ts";

const config = (extra: Partial<TaskConfig>) =>
  v.parse(TaskConfigSchema, {
    allocId: "a1",
    taskName: "t",
    env: { PATH: "/usr/bin:/bin" },
    cwd: "/tmp",
    stdoutPath: "/dev/null",
    stderrPath: "/dev/null",
    resources: { cpuMhz: 100, memoryMb: 64, memoryMaxMb: 0 },
    ...extra,
  });

describe("a task's network", () => {
  test("raw_exec in a bridge group runs behind nsenter --net, which also takes on its user", () => {
    const nobody = lookupUser("nobody");
    const bridged = config({ network: "bridge", netns: "/var/run/netns/a1", user: "nobody" });
    expect(rawExecArgv(bridged, ["env", "-0"])).toEqual([NSENTER, "--net=/var/run/netns/a1", `--setuid=${nobody.uid}`, `--setgid=${nobody.gid}`, "--", "/usr/bin/env", "-0"]);
    expect(rawExecArgv(config({ network: "host" }), ["env"])).toEqual(["env"]);
  });

  test("exec and docker: the group's network; docker's network_mode over it", () => {
    const bridged = config({ network: "bridge", netns: "/var/run/netns/a1" });
    expect(networkOf(bridged)).toEqual({ network: "host", netns: "/var/run/netns/a1" });
    expect(networkOf(bridged, "host")).toEqual({ network: "host" });
    expect(networkOf(bridged, "none")).toEqual({ network: "none" });
    expect(networkOf(config({ network: "none" }))).toEqual({ network: "none" });
    expect(() => networkOf(config({ network: "host" }), "bridge")).toThrow('network_mode: "bridge" joins the group\'s bridge network');
  });
});
