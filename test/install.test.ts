/**
 * install.sh against a local HTTP server serving a release folder built from
 * dist/: it installs the binary for this arch, refuses a tampered checksum,
 * and writes a systemd unit when asked.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnProcess } from "../src/runtime/spawn.ts";
import { ensureBinary, REPO } from "./helpers/binary.ts";
import { parentCgroupDirs } from "../src/cgroups/paths.ts";
import { canUseCgroups, testCgroupParent } from "./helpers/cgroups.ts";
import { capabilities, tempDir } from "./helpers/index.ts";

const ASSET = `drover-linux-${process.arch === "arm64" ? "arm64" : "x64"}`;
const releases = tempDir("drover-release-");
const cgroupParent = testCgroupParent();
let sums = "";

function release(name: string, checksums: string): string {
  const dir = join(releases, name);
  mkdirSync(dir);
  try {
    linkSync(ensureBinary(), join(dir, ASSET));
  } catch {
    copyFileSync(ensureBinary(), join(dir, ASSET));
  }
  writeFileSync(join(dir, "SHA256SUMS"), checksums);
  return dir;
}

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(request) {
    const path = join(releases, new URL(request.url).pathname);
    return existsSync(path) ? new Response(Bun.file(path)) : new Response("not found", { status: 404 });
  },
});
afterAll(() => server.stop(true));

async function install(releaseName: string, args: string[], env: Record<string, string> = {}) {
  const child = spawnProcess({
    argv: ["sh", join(REPO, "install.sh"), ...args],
    env: { PATH: process.env.PATH, DROVER_DOWNLOAD_URL: `http://127.0.0.1:${server.port}/${releaseName}`, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [status, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  return { code: status.exitCode, stdout, stderr };
}

describe("install.sh", () => {
  test("installs the verified binary for this arch under --prefix", async () => {
    sums = `${createHash("sha256").update(readFileSync(ensureBinary())).digest("hex")}  ${ASSET}\n`;
    release("good", sums);
    const prefix = tempDir();
    const result = await install("good", ["--prefix", prefix]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const installed = join(prefix, "bin", "drover");
    expect(readFileSync(installed).equals(readFileSync(ensureBinary()))).toBe(true);
    const version = Bun.spawnSync([installed, "version"]);
    expect(version.stdout.toString()).toStartWith("drover v");
    expect(result.stdout).toContain(`installed drover v`);
  });

  test("a checksum mismatch is refused and nothing is installed", async () => {
    release("tampered", `${"0".repeat(64)}  ${ASSET}\n`);
    const prefix = tempDir();
    const result = await install("tampered", ["--prefix", prefix]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`checksum mismatch for ${ASSET}`);
    expect(existsSync(join(prefix, "bin", "drover"))).toBe(false);
  });

  test("a SHA256SUMS without this arch's entry is refused", async () => {
    release("incomplete", `${"1".repeat(64)}  drover-linux-riscv64\n`);
    const prefix = tempDir();
    const result = await install("incomplete", ["--prefix", prefix]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no entry for ${ASSET}`);
    expect(existsSync(join(prefix, "bin", "drover"))).toBe(false);
  });

  test("an unreachable download fails with the URL", async () => {
    const result = await install("missing-release", ["--prefix", tempDir()]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cannot download");
  });

  test("--systemd writes a unit that keeps tasks alive across agent restarts", async () => {
    if (!sums) sums = `${createHash("sha256").update(readFileSync(ensureBinary())).digest("hex")}  ${ASSET}\n`;
    if (!existsSync(join(releases, "good"))) release("good", sums);
    const prefix = tempDir();
    const unitDir = tempDir();
    const configDir = join(tempDir(), "drover.d");
    const result = await install("good", ["--prefix", prefix, "--systemd"], { DROVER_SYSTEMD_DIR: unitDir, DROVER_CONFIG_DIR: configDir });
    expect(result.code).toBe(0);
    const unit = readFileSync(join(unitDir, "drover.service"), "utf8");
    expect(unit).toContain(`ExecStart=${join(prefix, "bin", "drover")} agent -config ${configDir}`);
    expect(unit).toContain("KillMode=process");
    expect(unit).toContain("Delegate=yes");
    expect(readFileSync(join(configDir, "agent.hcl"), "utf8")).toContain('data_dir  = "/var/lib/drover"');
    // The config it writes is one the agent accepts.
    const check = await import("../src/config/load.ts").then((m) => m.loadAgentConfig({ dev: false, configPaths: [configDir] }));
    expect(check.config.data_dir).toBe("/var/lib/drover");
  });

  test("--uninstall --purge removes the binary, the unit, the config, the data and the tasks' cgroups, with what ran in them", async () => {
    if (!sums) sums = `${createHash("sha256").update(readFileSync(ensureBinary())).digest("hex")}  ${ASSET}\n`;
    if (!existsSync(join(releases, "good"))) release("good", sums);
    const prefix = tempDir();
    const dataDir = join(tempDir(), "data");
    const env = { DROVER_SYSTEMD_DIR: tempDir(), DROVER_CONFIG_DIR: join(tempDir(), "drover.d"), DROVER_DATA_DIR: dataDir, DROVER_CGROUP_PARENT: cgroupParent };
    expect((await install("good", ["--prefix", prefix, "--systemd"], env)).code).toBe(0);
    mkdirSync(join(dataDir, "alloc"), { recursive: true });
    // A task left running in one of drover's cgroups (as after `systemctl stop drover`).
    const taskDirs = canUseCgroups ? parentCgroupDirs(capabilities.cgroups, cgroupParent).map((dir) => join(dir, "0123abcd-0000.web.scope")) : [];
    for (const dir of taskDirs) mkdirSync(dir, { recursive: true });
    const task = spawnProcess({ argv: ["sleep", "600"], env: { PATH: process.env.PATH }, ...(taskDirs[0] ? { cgroup: taskDirs[0] } : {}) });
    if (!taskDirs[0]) task.kill("SIGKILL");

    const result = await install("good", ["--prefix", prefix, "--uninstall", "--purge"], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("removed drover, its config and its data");
    for (const path of [join(prefix, "bin", "drover"), join(env.DROVER_SYSTEMD_DIR, "drover.service"), env.DROVER_CONFIG_DIR, dataDir, ...parentCgroupDirs(capabilities.cgroups, cgroupParent)]) {
      expect(existsSync(path)).toBe(false);
    }
    expect((await task.exited).signal).toBe(9);
  });

  test("--purge alone is refused", async () => {
    const result = await install("good", ["--purge"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("--purge goes with --uninstall");
  });

  test("DROVER_DOWNLOAD_URL may be a plain directory, such as the build's dist/", async () => {
    const prefix = tempDir();
    ensureBinary();
    const result = await install("unused", ["--prefix", prefix], { DROVER_DOWNLOAD_URL: join(REPO, "dist") });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(readFileSync(join(prefix, "bin", "drover")).equals(readFileSync(ensureBinary()))).toBe(true);
    const notThere = await install("unused", ["--prefix", prefix], { DROVER_DOWNLOAD_URL: join(prefix, "nope") });
    expect(notThere.code).toBe(1);
    expect(notThere.stderr).toContain("is neither a URL nor a directory");
  });

  test("piped to sh -s -- --help, it prints its usage", async () => {
    const child = Bun.spawnSync(["sh", "-s", "--", "--help"], { env: { PATH: process.env.PATH }, stdin: readFileSync(join(REPO, "install.sh")) });
    const stdout = child.stdout.toString();
    expect(child.exitCode).toBe(0);
    expect(stdout).toContain("--prefix DIR");
    expect(stdout).toContain("DROVER_DOWNLOAD_URL");
  });

  test("unknown options are refused", async () => {
    const result = await install("good", ["--frobnicate"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("unknown option --frobnicate");
  });
});
