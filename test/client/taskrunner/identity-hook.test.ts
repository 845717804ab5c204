/**
 * The identity hook on its own: a task's `identity { env file }` block puts
 * its signed workload identity in NOMAD_TOKEN and secrets/nomad_token.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { TaskConfig } from "../../../src/drivers/driver.ts";
import { identityHook, IDENTITY_FILE } from "../../../src/client/taskrunner/hooks/identity.ts";
import type { TaskHook } from "../../../src/client/taskrunner/hooks/hook.ts";
import { taskDirHook } from "../../../src/client/taskrunner/hooks/task-dir.ts";
import { tempDir } from "../../helpers/index.ts";
import { allocRunner, job, placeJob, task } from "../fixtures.ts";

async function runWith(block: string, sign: (allocId: string, task: string) => string | undefined, extra: TaskHook[] = []) {
  const [alloc] = await placeJob(job([task("t", "exit:0", block)]));
  const fixture = allocRunner(alloc!, { taskHooks: () => [taskDirHook({ secretsTmpfs: false }), ...extra, identityHook(sign)] });
  // The environment the task was started with (the fake driver forgets a task once it exits).
  const started: TaskConfig[] = [];
  const start = fixture.driver.startTask.bind(fixture.driver);
  fixture.driver.startTask = (config) => (started.push(config), start(config));
  await fixture.runner.run();
  const env = started[0]?.env ?? {};
  return { state: fixture.runner.taskStates().t!, taskDir: fixture.runner.allocDir.taskDir("t"), env, alloc: alloc! };
}

describe("the identity hook", () => {
  test("env and file: NOMAD_TOKEN and secrets/nomad_token (0600) hold the token signed for the task", async () => {
    const signed: string[] = [];
    const { env, taskDir, alloc } = await runWith("identity {\n env = true\n file = true\n }", (allocId, name) => (signed.push(`${allocId}/${name}`), `jwt-for-${name}`));
    expect(signed).toEqual([`${alloc.ID}/t`]);
    expect(env.NOMAD_TOKEN).toBe("jwt-for-t");
    const file = join(taskDir.secrets, IDENTITY_FILE);
    expect(readFileSync(file, "utf8")).toBe("jwt-for-t");
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  test("without the block, or with both off, the task gets no token", async () => {
    for (const block of ["", "identity {\n env = false\n }"]) {
      const { env, taskDir } = await runWith(block, () => "jwt");
      expect(env.NOMAD_TOKEN).toBeUndefined();
      expect(existsSync(join(taskDir.secrets, IDENTITY_FILE))).toBe(false);
    }
  });

  test("no signer (an agent without the server) fails the start naming why; a symlink the task planted is replaced, not followed", async () => {
    const unsigned = await runWith("identity {\n env = true\n }", () => undefined);
    expect(unsigned.state.Events.map((event) => event.SetupError ?? "").join("\n")).toContain("no workload identity");

    const outside = join(tempDir("drover-identity-outside-"), "victim");
    const plant: TaskHook = { name: "plant", prestart: async (req) => void symlinkSync(outside, join(req.taskDir.secrets, IDENTITY_FILE)) };
    const { taskDir } = await runWith("identity {\n file = true\n }", () => "jwt", [plant]);
    expect(existsSync(outside)).toBe(false);
    expect(readFileSync(join(taskDir.secrets, IDENTITY_FILE), "utf8")).toBe("jwt");
  });
});
