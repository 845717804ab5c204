/**
 * A task's output through the log pump into rotated files, with the compiled
 * binary and under Deno: `logs { max_files max_file_size }` bound the files,
 * every file ends on a line boundary, and no line is lost or doubled in what
 * is kept.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logFileIndexes } from "../../src/log-layout/layout.ts";
import { LINE_WINDOW } from "../../src/logmon/log-stream.ts";
import { testAgent } from "../helpers/agent.ts";
import { waitFor } from "../helpers/index.ts";
import { droverRuntimes } from "../helpers/runtimes.ts";

/** Numbered lines, about 4.9 MB: enough to rotate a 1 MiB limit several times over. */
const LAST_LINE = 700_000;

const JOB = `
job "chatty" {
  type = "service"
  group "g" {
    task "talk" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "seq 1 ${LAST_LINE}; exec sleep 600"]
      }
      logs {
        max_files     = 3
        max_file_size = 1
      }
      resources {
        memory = 32
      }
    }
  }
}
`;

const MIB = 1024 * 1024;

for (const runtime of droverRuntimes()) {
  const agent = await testAgent("drover-e2e-logs-", {}, {}, runtime);

  describe(`log rotation (${runtime.name})`, () => {
    test("a task's output rotates within max_files and max_file_size, on line boundaries", async () => {
      writeFileSync(join(agent.dir, "chatty.hcl"), JOB);
      await agent.start();
      expect((await agent.cli("job", "run", "-detach", join(agent.dir, "chatty.hcl"))).code).toBe(0);
      const alloc = await waitFor("the alloc running", async () =>
        (await agent.get<{ ID: string; ClientStatus: string }[]>("/v1/job/chatty/allocations")).find((a) => a.ClientStatus === "running"),
      );
      const logDir = join(agent.dataDir, "alloc", alloc.ID, "alloc", "logs");
      const files = () => logFileIndexes(logDir, "talk", "stdout").map((index) => join(logDir, `talk.stdout.${index}`));
      const kept = await waitFor("the last line in the live file", () => {
        const paths = files();
        return paths.length > 0 && readFileSync(paths.at(-1)!, "utf8").endsWith(`\n${LAST_LINE}\n`) ? paths : null;
      });

      expect(kept.length).toBe(3);
      expect(logFileIndexes(logDir, "talk", "stdout")[0]).toBeGreaterThan(0);
      for (const path of kept) {
        expect(statSync(path).size).toBeLessThanOrEqual(MIB + LINE_WINDOW);
        expect(readFileSync(path, "utf8").endsWith("\n")).toBe(true);
      }
      const lines = kept.map((path) => readFileSync(path, "utf8")).join("").split("\n").filter(Boolean).map(Number);
      const first = lines[0]!;
      expect(lines).toEqual(Array.from({ length: LAST_LINE - first + 1 }, (_, i) => first + i));

      expect((await agent.cli("job", "stop", "chatty")).code).toBe(0);
      await agent.executorsGone();
      agent.process.kill("SIGTERM");
      expect((await agent.process.exited).exitCode).toBe(0);
    });
  });
}
