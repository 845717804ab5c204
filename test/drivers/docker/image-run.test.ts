/** What runs for an image config and a job's keys, as Docker decides it; users resolved in the image's own files. */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { imageRun, type JobRunKeys } from "../../../src/drivers/docker/image-run.ts";
import type { ImageConfig } from "../../../src/drivers/docker/oci.ts";
import { capabilities, tempDir } from "../../helpers/index.ts";

const dir = tempDir("drover-image-run-");
const bottom = join(dir, "bottom");
const top = join(dir, "top");
mkdirSync(join(bottom, "etc"), { recursive: true });
mkdirSync(join(top, "etc"), { recursive: true });
writeFileSync(join(bottom, "etc/passwd"), "root:x:0:0::/root:/bin/sh\nweb:x:1000:1001::/srv:/bin/sh\n");
writeFileSync(join(bottom, "etc/group"), "root:x:0:\nstaff:x:50:\n");

const image = (config: NonNullable<ImageConfig["config"]>): ImageConfig => ({ config });
const job = (keys: Partial<JobRunKeys> = {}): JobRunKeys => ({ args: [], env: {}, ...keys });

describe("argv, env and working dir", () => {
  const config = image({ Entrypoint: ["/entry"], Cmd: ["serve", "--port=80"], Env: ["A=image", "B=image"], WorkingDir: "/srv/" });

  test("the image's Entrypoint and Cmd, its Env under the task's, its WorkingDir", () => {
    expect(imageRun(config, [bottom], job({ env: { B: "task" } }))).toEqual({ argv: ["/entry", "serve", "--port=80"], env: { A: "image", B: "task" }, cwd: "/srv", user: "0:0" });
  });

  test("command and args, or args alone, replace Cmd and keep the Entrypoint", () => {
    expect(imageRun(config, [bottom], job({ command: "check", args: ["-v"] })).argv).toEqual(["/entry", "check", "-v"]);
    expect(imageRun(config, [bottom], job({ args: ["-v"] })).argv).toEqual(["/entry", "-v"]);
  });

  test("an entrypoint from the job drops the image's Cmd; work_dir replaces WorkingDir", () => {
    expect(imageRun(config, [bottom], job({ entrypoint: ["/bin/sh"], workDir: "/tmp" }))).toMatchObject({ argv: ["/bin/sh"], cwd: "/tmp" });
  });

  test("nothing to run is refused, saying what to set", () => {
    expect(() => imageRun(image({}), [bottom], job())).toThrow("config: command: the image has no Entrypoint or Cmd, so the job must give command or entrypoint");
  });
});

describe("users", () => {
  const run = (user: string, layers = [bottom]) => imageRun(image({ Cmd: ["x"], User: user }), layers, job()).user;

  test("names and uids through the image's passwd and group; a uid without an entry gets gid 0", () => {
    expect(run("web")).toBe("1000:1001");
    expect(run("1000")).toBe("1000:1001");
    expect(run("4242")).toBe("4242:0");
    expect(run("web:staff")).toBe("1000:50");
    expect(run("web:7")).toBe("1000:7");
    expect(imageRun(image({ Cmd: ["x"], User: "web" }), [bottom], job({ user: "root" })).user).toBe("0:0");
  });

  test("an unknown name is refused naming it", () => {
    expect(() => run("nobody")).toThrow(`user: "nobody" is not in the image's /etc/passwd`);
    expect(() => run("web:wheel")).toThrow(`user: group "wheel" is not in the image's /etc/group`);
  });

  test("a uid or gid past what a process may hold is refused naming it, the all-ones uid (setresuid's 'unchanged', so root) included", () => {
    expect(run("4294967294:4294967294")).toBe("4294967294:4294967294");
    expect(() => run("4294967295")).toThrow("user: uid 4294967295 is out of range (at most 4294967294)");
    expect(() => run("4294967296")).toThrow("user: uid 4294967296 is out of range (at most 4294967294)");
    expect(() => run("web:4294967295")).toThrow("user: gid 4294967295 is out of range (at most 4294967294)");
  });

  test.skipIf(!capabilities.root)("a passwd deleted by a higher layer's whiteout is not read", () => {
    spawnSync("mknod", [join(top, "etc/passwd"), "c", "0", "0"]);
    expect(() => run("web", [bottom, top])).toThrow(`"web" is not in the image's /etc/passwd`);
  });
});
