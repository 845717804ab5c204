/**
 * `drover job run` with the compiled binary and under Deno follows a task that cannot
 * start: each task event is printed as it happens, with the driver's reason,
 * and the command exits 1 as soon as the allocation has failed, without
 * waiting out restarts that cannot help.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";

for (const runtime of droverRuntimes()) {
  describe(`drover job run (${runtime.name})`, async () => {
    const agent = await testAgent("drover-job-run-events-", {}, {}, runtime);
    await agent.start();

    test("a command that does not exist: its events as they come, then exit 1 at once", async () => {
      const path = join(agent.dir, "missing.hcl");
      writeFileSync(
        path,
        `job "missing" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/no/such/command"
      }
    }
  }
}
`,
      );
      const result = await agent.cli("job", "run", path);
      expect(result.code).toBe(1);
      const lines = result.stdout.split("\n");
      const at = (pattern: RegExp) => {
        const index = lines.findIndex((line) => pattern.test(line));
        if (index < 0) throw new Error(`no line matches ${pattern}:\n${result.stdout}`);
        return index;
      };
      const failure = at(/^ {4}Allocation "[0-9a-f]{8}" task "t": Driver Failure: .*command "\/no\/such\/command": \/no\/such\/command does not exist$/);
      const notRestarting = at(/^ {4}Allocation "[0-9a-f]{8}" task "t": Not Restarting: Error was unrecoverable$/);
      const failed = at(/^ {4}Allocation "[0-9a-f]{8}" \(g\[0\]\) is failed: Failed tasks$/);
      expect(at(/task "t": Received: Task received by client$/)).toBeLessThan(failure);
      expect(failure).toBeLessThan(notRestarting);
      expect(notRestarting).toBeLessThan(failed);
      expect(result.stdout).not.toContain("Restarting: Restart within policy");
    }, 60_000);
  });
}
