/**
 * `job run` of a job that launches children (periodic, parameterized):
 * registering it makes no evaluation, so there is none to follow, as in
 * Nomad's CLI; `job status` tells the next launch of Nomad 1.6's `crons`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jobCommand } from "../../src/cli/job/index.ts";
import { captureIo, startTestAgent } from "./harness.ts";

const agent = await startTestAgent();
const dir = mkdtempSync(join(tmpdir(), "drover-cli-children-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function jobFile(id: string, block: string): string {
  const path = join(dir, `${id}.hcl`);
  writeFileSync(path, `job "${id}" {\n  type = "batch"\n${block}\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n`);
  return path;
}

describe("job run of a job that launches children", () => {
  test("a periodic job (crons) is registered with its next launch; job status tells it too", async () => {
    const io = captureIo({ NOMAD_ADDR: agent.address });
    expect(await jobCommand(["run", jobFile("nightly", '  periodic {\n    crons = ["0 3 * * *"]\n  }')], io)).toBe(0);
    expect(io.err).toBe("");
    expect(io.out).toMatch(/^Job registration successful\nApproximate next launch time: \S+ \(.+ from now\)\n$/);
    const status = captureIo({ NOMAD_ADDR: agent.address });
    expect(await jobCommand(["status", "nightly"], status)).toBe(0);
    expect(status.out).toMatch(/\nNext Periodic Launch = \S+ \(.+ from now\)\n/);
  });

  test("a parameterized job is registered, nothing to follow", async () => {
    const io = captureIo({ NOMAD_ADDR: agent.address });
    expect(await jobCommand(["run", jobFile("on-demand", '  parameterized {\n    payload = "optional"\n  }')], io)).toBe(0);
    expect(io).toMatchObject({ out: "Job registration successful\n", err: "" });
  });
});
