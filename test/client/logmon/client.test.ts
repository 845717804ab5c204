/**
 * The agent's logmon client against a stand-in logmon that records each call:
 * registrations made while one is under way go out together, and a logmon
 * from before registerBatch still gets every task, one register at a time.
 */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { LogmonClient } from "../../../src/client/logmon/client.ts";
import { LogmonSupervisor } from "../../../src/client/logmon/supervisor.ts";
import { LOGMON_PROTOCOL, type LogmonTask } from "../../../src/logmon/protocol.ts";
import { serveRpc } from "../../../src/rpc/server.ts";
import { tempDir } from "../../helpers/index.ts";

const dir = tempDir("drover-lmclient-");

function task(i: number): LogmonTask {
  return { id: `alloc-${i}/web`, logDir: `/nonexistent/alloc-${i}/alloc/logs`, taskName: "web", maxFiles: 2, maxFileSizeMB: 1 };
}

/** A logmon stand-in: `register` refuses task 3; `registerBatch` exists unless `old`. Every call is recorded. */
function standIn(name: string, old: boolean) {
  const calls: { method: string; ids: string[] }[] = [];
  const register = (t: LogmonTask) => {
    calls.push({ method: "register", ids: [t.id] });
    if (t.id === "alloc-3/web") throw new Error("refused: alloc-3");
    return { created: true };
  };
  const version = () => ({ version: "stand-in", pid: process.pid, tasks: 0 });
  const socketPath = join(dir, `${name}.sock`);
  const { registerBatch: _registerBatch, ...oldProtocol } = LOGMON_PROTOCOL;
  const common = { register, deregister: () => ({ removed: false }), flush: () => ({ bytes: 0 }), version };
  const server = old
    ? serveRpc(socketPath, oldProtocol, common)
    : serveRpc(socketPath, LOGMON_PROTOCOL, {
        ...common,
        registerBatch: ({ tasks }) => {
          calls.push({ method: "registerBatch", ids: (tasks as LogmonTask[]).map((t) => t.id) });
          return {
            results: (tasks as LogmonTask[]).map((t) => (t.id === "alloc-3/web" ? { error: "refused: alloc-3" } : { created: true })),
          };
        },
      });
  // Only the connection is closed at the end: the stand-in's pid is this test's own.
  const supervisor = new LogmonSupervisor({ stateDir: join(dir, name), socketPath });
  afterAll(() => {
    supervisor.stop();
    server.stop();
  });
  return { calls, client: new LogmonClient(supervisor) };
}

test("registrations made while one is under way go out in one registerBatch; each caller gets its own answer", async () => {
  const { calls, client } = standIn("new", false);
  const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => client.register(task(i))));
  expect(results.map((r) => (r.status === "fulfilled" ? r.value : (r.reason as Error).message))).toEqual([
    { created: true },
    { created: true },
    { created: true },
    "refused: alloc-3",
    { created: true },
    { created: true },
  ]);
  // The first goes out alone at once; the five made meanwhile wait for it and go out together.
  expect(calls).toEqual([
    { method: "register", ids: ["alloc-0/web"] },
    { method: "registerBatch", ids: ["alloc-1/web", "alloc-2/web", "alloc-3/web", "alloc-4/web", "alloc-5/web"] },
  ]);
});

test("a logmon from before registerBatch gets every task as one register each", async () => {
  const { calls, client } = standIn("old", true);
  const first = await Promise.allSettled(Array.from({ length: 5 }, (_, i) => client.register(task(i))));
  expect(first.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "fulfilled"]);
  expect(calls.map((call) => call.ids[0])).toEqual(["alloc-0/web", "alloc-1/web", "alloc-2/web", "alloc-3/web", "alloc-4/web"]);
  // Learnt once: the next burst does not ask for registerBatch again.
  await Promise.all([5, 6, 7].map((i) => client.register(task(i))));
  expect(calls.map((call) => call.method)).toEqual(Array.from({ length: 8 }, () => "register"));
});
