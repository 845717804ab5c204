/** A client that drops a followed log stream is not an agent error: nothing is logged at ERROR, and the agent serves on. */
import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { waitFor } from "../helpers/index.ts";

const JOB = `
job "chatty" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while :; do echo line; sleep 0.05; done"]
      }
      resources {
        cpu    = 20
        memory = 32
      }
    }
  }
}
`;

describe("dropped log streams", async () => {
  const agent = await testAgent("drover-dropped-stream-");
  await agent.start();

  test("following logs then hanging up, plain or framed, logs nothing at ERROR", async () => {
    const jobFile = join(agent.dir, "chatty.hcl");
    writeFileSync(jobFile, JOB);
    expect((await agent.cli("job", "run", jobFile)).code).toBe(0);
    const [alloc] = await agent.get<{ ID: string }[]>("/v1/job/chatty/allocations");
    for (const plain of [true, false]) {
      const abort = new AbortController();
      const res = await fetch(`${agent.address}/v1/client/fs/logs/${alloc!.ID}?task=t&type=stdout&follow=true&origin=start&plain=${plain}`, { signal: abort.signal });
      const reader = res.body!.getReader();
      await reader.read();
      abort.abort();
      await reader.read().catch(() => undefined);
    }
    // The agent still answers, and has had time to log whatever the hang-ups caused.
    await waitFor("the agent to answer", async () => (await fetch(`${agent.address}/v1/agent/health`)).ok);
    await agent.get("/v1/allocations");
    const logs = readdirSync(agent.dir).filter((name) => name.startsWith("agent-")).map((name) => readFileSync(join(agent.dir, name), "utf8")).join("");
    const errors = logs.split("\n").filter((line) => line.startsWith("{") && (JSON.parse(line) as { level: number }).level >= 50);
    expect(errors).toEqual([]);
    expect((await agent.cli("job", "stop", "-purge", "chatty")).code).toBe(0);
  });
});
