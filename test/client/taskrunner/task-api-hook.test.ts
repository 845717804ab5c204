/**
 * The task API socket hook with a real unix-socket server: made in secrets/
 * however deep the alloc dir is, owned by the task's user, made again over a
 * stale one after an agent restart, kept across a restart of the task, gone
 * once the task stops for good.
 */
import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, lstatSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import type { TaskHookContext } from "../../../src/client/taskrunner/hooks/hook.ts";
import { taskApiHook, type ServeTaskApi, type TaskIdentity } from "../../../src/client/taskrunner/hooks/task-api.ts";
import { serveHttpUnix } from "../../../src/runtime/serve.ts";
import { capabilities, tempDir } from "../../helpers/index.ts";
import { silentLogger } from "../fixtures.ts";

/** A secrets dir deeper than a socket path may be long (107 bytes). */
function deepSecrets(): string {
  const secrets = join(tempDir("drover-task-api-"), "a".repeat(60), "b".repeat(60), "web", "secrets");
  mkdirSync(secrets, { recursive: true, mode: 0o700 });
  return secrets;
}

function context(secrets: string, user = ""): TaskHookContext {
  return {
    alloc: { ID: "a1b2c3d4-0000-0000-0000-000000000000", JobID: "shop", Namespace: "default", TaskGroup: "web" },
    task: { Name: "web", Driver: "exec", User: user },
    taskDir: { secrets },
  } as unknown as TaskHookContext;
}

/** GET `path` on the unix socket at `socket`: the body. */
function get(socket: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, path }, (res) => {
      let body = "";
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () => resolve(body));
    });
    req.on("error", reject);
    req.end();
  });
}

const served: TaskIdentity[] = [];
const host = serveHttpUnix<TaskIdentity>((req, _connection, task) => Response.json({ path: new URL(req.url).pathname, task }));
const serve: ServeTaskApi = (path, task) => {
  served.push(task);
  return host.listen(path, task);
};

describe.skipIf(!capabilities.root)("the task API socket", () => {
  test("answers for the task's identity, in place of a stale socket, owned by the task's user, until the task stops for good", async () => {
    const secrets = deepSecrets();
    const socket = join(secrets, "api.sock");
    expect(Buffer.byteLength(socket)).toBeGreaterThan(107);
    // Left by an agent that stopped.
    writeFileSync(socket, "");
    const hook = taskApiHook(serve, silentLogger);
    await hook.prestart!({ ...context(secrets), previous: undefined });
    // Reached through a descriptor of secrets/, as the path is too long for connect() (a task has /secrets).
    const dir = openSync(secrets, "r");
    const short = `/proc/self/fd/${dir}/api.sock`;
    try {
      expect(JSON.parse(await get(short, "/v1/allocation/x"))).toEqual({
        path: "/v1/allocation/x",
        task: { allocId: "a1b2c3d4-0000-0000-0000-000000000000", taskName: "web", jobId: "shop", namespace: "default", group: "web" },
      });
      expect(lstatSync(socket).isSocket()).toBe(true);
      expect(lstatSync(socket).uid).toBe(65534);

      // A restart of the task, and the poststart after it: the same server.
      await hook.stop!({ ...context(secrets), final: false });
      await hook.poststart!({ ...context(secrets), taskId: "x" });
      expect(served.length).toBe(1);
      expect(await get(short, "/v1/agent/health")).toContain("health");
    } finally {
      closeSync(dir);
    }
    await hook.stop!({ ...context(secrets), final: true });
    expect(existsSync(socket)).toBe(false);
  });
});
