/**
 * The VM suite: a Debian 12 guest (pure cgroup v2, booted by systemd) under
 * QEMU, where an operator installs drover as the README says and runs jobs
 * (test/vm/guest/suite.sh does the steps, inside). Each step the guest
 * reports is a test here. Slow (minutes under TCG), so it runs only when
 * asked: DROVER_VM_TESTS=1, as .ci/vm sets it, with dist/ built, root, and
 * mmdebstrap, qemu-system-x86, cpio and zstd installed.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { spawnProcess } from "../../src/runtime/spawn.ts";

const HERE = import.meta.dir;
const enabled = process.env.DROVER_VM_TESTS === "1";
if (!enabled) console.log("skipping the VM suite: set DROVER_VM_TESTS=1 (or run .ci/vm) to boot the guest");

/** The steps each case reports, in order (guest/suite.sh). */
const INSTALL_STEPS = [
  "cgroup v2 alone at /sys/fs/cgroup",
  "install.sh --systemd",
  "systemctl enable --now drover",
  "the unit delegates its cgroup",
  "the agent answers the operator's CLI",
];
const UNINSTALL_STEPS = ["install.sh --uninstall --purge", "nothing left (binary, unit, config, data, cgroups, processes)"];
const CASES: Record<string, { about: string; kernelArgs: string[]; steps: string[] }> = {
  main: {
    about: "install, limits, OOM, device program, agent restarts, uninstall",
    kernelArgs: [],
    steps: [
      ...INSTALL_STEPS,
      "sock_diag answers (inet_diag loaded on demand)",
      "job run",
      "the exec task runs in drover.slice",
      "memory.max is the task's memory",
      "pids.max is the task's pids_limit",
      "cpu.weight is set from the task's cpu",
      "swap is not added to the limit",
      "the OOM kill is reported",
      "stats are read from v2 files",
      "a device program is attached to the task's cgroup",
      "in the task's cgroup a disk node is refused",
      "in the task's cgroup /dev/null, zero and urandom open",
      "systemctl restart drover",
      "the agent is back after the restart",
      "the task kept running through the restart",
      "the new agent reattached (stats through the executor)",
      "systemctl stop drover",
      "the task runs while the agent is stopped",
      "systemctl start drover",
      "the agent is back after the stop",
      "the task is the same after stop and start",
      "the reattached agent stops the job",
      "the task's cgroup is gone after the stop",
      "job run before uninstall",
      "a task runs before uninstall",
      ...UNINSTALL_STEPS,
    ],
  },
  "no-sock-diag": {
    about: "a kernel without inet_diag and tcp_diag",
    kernelArgs: ["module_blacklist=inet_diag,tcp_diag"],
    steps: [
      "inet_diag is not loaded",
      ...INSTALL_STEPS,
      "the agent names the missing modules in its log",
      "job run",
      "a task calling the API over TCP is still refused",
      "the operator is still served",
      ...UNINSTALL_STEPS,
    ],
  },
};

async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawnProcess({ argv, env: { ...process.env } as Record<string, string>, stdout: "pipe", stderr: "pipe" });
  const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code: status.exitCode, stdout, stderr };
}

/** What the guest said of each step ("ok", or "not-ok: why"), and whether it got to the end. */
async function boot(image: string, name: string, kernelArgs: string[]): Promise<{ steps: Map<string, string>; done: boolean; console: string }> {
  const { stdout, stderr } = await run(["sh", join(HERE, "boot.sh"), image, name, ...kernelArgs]);
  const steps = new Map<string, string>();
  let done = false;
  for (const line of stdout.split(/\r?\n/)) {
    const match = /VM (ok|not-ok) ([^:]+)(?:: (.*))?$/.exec(line);
    if (match) steps.set(match[2]!, match[1] === "ok" ? "ok" : `not-ok: ${match[3] ?? ""}`);
    if (/VM done\s*$/.test(line)) done = true;
  }
  return { steps, done, console: `${stdout}\n${stderr}`.slice(-4000) };
}

const image = enabled ? await run(["sh", join(HERE, "image.sh")]) : undefined;
if (image && image.code !== 0) throw new Error(`building the guest image failed:\n${image.stderr.slice(-2000)}`);

for (const [name, { about, kernelArgs, steps }] of Object.entries(CASES)) {
  const result = enabled ? await boot(image!.stdout.trim(), name, kernelArgs) : undefined;
  describe.skipIf(!enabled)(`in a Debian 12 guest, ${name}: ${about}`, () => {
    test("the guest ran the suite to its end", () => {
      if (!result!.done) console.log(result!.console);
      expect(result!.done).toBe(true);
    });
    for (const step of steps) {
      test(step, () => {
        expect(result!.steps.get(step) ?? "not reported").toBe("ok");
      });
    }
  });
}
