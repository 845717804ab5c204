/**
 * The compiled binary runs the role too: its modules live in /$bunfs, it
 * starts as PID 1 of the new namespace, and the task ends the same way.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../helpers/binary.ts";
import { capabilities } from "../helpers/index.ts";
import { allocLayout } from "./fixture.ts";
import { isolationSpec, startCompiledTask } from "./layout.ts";

const started: ReturnType<typeof startCompiledTask>[] = [];
// Through the handle: once the task is reaped, kill sends nothing, so no reused pid is signalled.
afterEach(() => {
  for (const task of started.splice(0)) task.kill("SIGKILL");
});

describe.skipIf(!capabilities.root)("compiled drover nsenter", () => {
  test("isolates a task exactly as in development", async () => {
    const binary = ensureBinary();
    const layout = allocLayout();
    const specFile = join(layout.root, "spec.json");
    const script = "echo pid=$$; uname -n; id -u; ls /";
    writeFileSync(specFile, JSON.stringify(isolationSpec(layout, { argv: ["/bin/sh", "-c", script] })));
    const task = startCompiledTask(binary, specFile);
    started.push(task);
    const [exitCode, stdout, stderr] = await Promise.all([task.exited, new Response(task.stdout).text(), new Response(task.stderr).text()]);
    expect(stderr).toBe("");
    expect(exitCode).toBe(0);
    const lines = stdout.trim().split("\n");
    expect(lines.slice(0, 3)).toEqual(["pid=1", "a1b2c3d4", "65534"]);
    expect(lines.slice(3)).toEqual(expect.arrayContaining(["alloc", "dev", "local", "proc", "secrets", "tmp", "usr"]));
  });
});
