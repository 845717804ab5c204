/** Whether the exec driver can run here, and the reason when it cannot. */
import { describe, expect, test } from "bun:test";
import { detectIsolation, type IsolationFacts, judgeIsolation } from "../../src/nsenter/detect.ts";
import { capabilities } from "../helpers/index.ts";

const capable: IsolationFacts = {
  platform: "linux",
  euid: 0,
  cgroups: { mode: "v2", mount: "/sys/fs/cgroup", controllers: ["memory", "cpu"] },
  missingNamespaces: [],
  kernelRelease: "6.1.0-18-amd64",
};

describe("judgeIsolation", () => {
  test("a root agent on a recent Linux with cgroups can isolate", () => {
    expect(judgeIsolation(capable)).toEqual({ available: true });
  });

  test.each([
    ["not Linux", { platform: "darwin" }, "isolation needs Linux namespaces; this is darwin"],
    ["not root", { euid: 1000 }, "the agent is not running as root (euid 1000)"],
    ["no cgroups", { cgroups: { mode: "none", reason: "no memory controller" } }, "no cgroup controller: no memory controller"],
    ["no namespaces", { missingNamespaces: ["pid", "net"] }, "the kernel lacks pid, net namespaces"],
    ["an old kernel", { kernelRelease: "5.10.0-28-amd64" }, "kernel 5.10.0-28-amd64 is older than 5.12 (mount_setattr)"],
    ["an old libc", { libcError: "symbol pivot_root not found" }, "libc: symbol pivot_root not found"],
  ] as const)("refuses with the reason when %s", (_, facts, reason) => {
    expect(judgeIsolation({ ...capable, ...facts } as IsolationFacts)).toEqual({ available: false, reason });
  });
});

describe("detectIsolation", () => {
  test.skipIf(!capabilities.root || capabilities.cgroups.mode === "none")("finds this root host capable", async () => {
    expect(await detectIsolation()).toEqual({ available: true });
  });
});
