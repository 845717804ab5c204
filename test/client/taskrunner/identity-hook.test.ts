/**
 * The identity hook on its own: a task's `identity { env file }` block puts
 * its signed workload identity in NOMAD_TOKEN and secrets/nomad_token; a
 * named one in NOMAD_TOKEN_<name> and secrets/nomad_<name>.jwt, renewed
 * before its ttl runs out with its change_mode.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { identityHook, IDENTITY_FILE, type SignIdentity } from "../../../src/client/taskrunner/hooks/identity.ts";
import type { IdentitySpec } from "../../../src/structs/job.ts";
import type { TaskHook } from "../../../src/client/taskrunner/hooks/hook.ts";
import { taskDirHook } from "../../../src/client/taskrunner/hooks/task-dir.ts";
import { tempDir, waitFor } from "../../helpers/index.ts";
import { allocRunner, job, placeJob, task } from "../fixtures.ts";

async function runWith(block: string, sign: SignIdentity, extra: TaskHook[] = []) {
  const [alloc] = await placeJob(job([task("t", "exit:0", block)]));
  const fixture = allocRunner(alloc!, { taskHooks: () => [taskDirHook({ secretsTmpfs: false }), ...extra, identityHook(sign)] });
  await fixture.runner.run();
  const env = fixture.driver.started[0]?.env ?? {};
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

  test("named identities: NOMAD_TOKEN_<name> and secrets/nomad_<name>.jwt, each signed with its name, audience and ttl", async () => {
    const specs: (IdentitySpec | undefined)[] = [];
    const block = `identity {\n env = true\n }\nidentity {\n name = "vault"\n aud = ["vault.io"]\n env = true\n file = true\n ttl = "1h"\n }\nidentity {\n name = "consul"\n aud = ["consul.io"]\n }`;
    const { env, taskDir } = await runWith(block, (_, __, spec) => (specs.push(spec), `jwt-${spec?.Name ?? "default"}`));
    expect(specs.map((spec) => spec && { Name: spec.Name, Audience: spec.Audience, TTL: spec.TTL })).toEqual([undefined, { Name: "vault", Audience: ["vault.io"], TTL: 3600 * 1e9 }]);
    expect(env.NOMAD_TOKEN).toBe("jwt-default");
    expect(env.NOMAD_TOKEN_vault).toBe("jwt-vault");
    // "consul" asks for neither env nor file: it is for Consul, which drover does not have, so no token is made.
    expect(env.NOMAD_TOKEN_consul).toBeUndefined();
    const file = join(taskDir.secrets, "nomad_vault.jwt");
    expect(readFileSync(file, "utf8")).toBe("jwt-vault");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(join(taskDir.secrets, IDENTITY_FILE))).toBe(false);
  });

  test("a ttl: the token is signed again before it runs out, the file rewritten, and change_mode signal sends change_signal", async () => {
    let signed = 0;
    const [alloc] = await placeJob(job([task("t", "run", `identity {\n name = "short"\n aud = ["x"]\n file = true\n ttl = "2s"\n change_mode = "signal"\n change_signal = "SIGHUP"\n }`)]));
    const fixture = allocRunner(alloc!, { taskHooks: () => [taskDirHook({ secretsTmpfs: false }), identityHook(() => `jwt-${++signed}`)] });
    void fixture.runner.run();
    const file = join(fixture.runner.allocDir.taskDir("t").secrets, "nomad_short.jwt");
    await waitFor("the first token", () => existsSync(file) && readFileSync(file, "utf8") === "jwt-1");
    await waitFor("the renewed token", () => readFileSync(file, "utf8") === "jwt-2", { timeoutMs: 10_000 });
    await waitFor("the task signalled", () => fixture.driver.calls.includes("signal t SIGHUP"));
    expect(fixture.driver.calls.filter((call) => call.startsWith("start"))).toEqual(["start t"]);
    await fixture.runner.destroy();
  });

  test("a renewal that cannot be signed says so on the task and is tried again; the task keeps running", async () => {
    let calls = 0;
    // The first token, then one refusal (no signer for a moment), then tokens again.
    const sign = () => (++calls === 2 ? undefined : `jwt-${calls}`);
    const [alloc] = await placeJob(job([task("t", "run", `identity {\n name = "short"\n aud = ["x"]\n file = true\n ttl = "2s"\n }`)]));
    const fixture = allocRunner(alloc!, { taskHooks: () => [taskDirHook({ secretsTmpfs: false }), identityHook(sign)] });
    void fixture.runner.run();
    const file = join(fixture.runner.allocDir.taskDir("t").secrets, "nomad_short.jwt");
    await waitFor("the first token", () => existsSync(file) && readFileSync(file, "utf8") === "jwt-1");
    await waitFor("the retried renewal", () => readFileSync(file, "utf8") === "jwt-3", { timeoutMs: 10_000 });
    const messages = fixture.runner.taskStates().t!.Events.map((event) => `${event.Type}: ${event.Message}`);
    expect(messages).toContain('Task hook failed: identity: renewing "short" failed: no workload identity "short" for task "t": the server cannot sign one; trying again');
    expect(fixture.runner.taskStates().t!.State).toBe("running");
    expect(fixture.driver.calls.filter((call) => call.startsWith("start"))).toEqual(["start t"]);
    await fixture.runner.destroy();
  });

  test("a ttl with change_mode restart: the task restarts and starts with new tokens", async () => {
    let signed = 0;
    const [alloc] = await placeJob(job([task("t", "run", `identity {\n name = "short"\n aud = ["x"]\n env = true\n ttl = "2s"\n change_mode = "restart"\n }`)]));
    const fixture = allocRunner(alloc!, { taskHooks: () => [taskDirHook({ secretsTmpfs: false }), identityHook(() => `jwt-${++signed}`)] });
    const { started } = fixture.driver;
    void fixture.runner.run();
    await waitFor("the task started again", () => started.length >= 2, { timeoutMs: 10_000 });
    expect(started[0]!.env.NOMAD_TOKEN_short).toBe("jwt-1");
    // The renewal signed one (the restart's reason), the new start another.
    expect(started[1]!.env.NOMAD_TOKEN_short).toBe("jwt-3");
    expect(fixture.runner.taskStates().t!.Events.map((event) => event.DisplayMessage ?? "")).toContain("Identity[short]: new token acquired");
    await fixture.runner.destroy();
  });
});
