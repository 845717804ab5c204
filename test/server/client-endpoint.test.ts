import { describe, expect, test } from "bun:test";
import { clientEndpoint } from "../../src/server/client-endpoint.ts";
import { ServerError } from "../../src/server/errors.ts";
import { sleep } from "../helpers/index.ts";
import { openTestServer, testJob, testNode } from "./fixtures.ts";

/** Resolves to "pending" if `promise` has not settled within a moment. */
async function settled<T>(promise: Promise<T>): Promise<T | "pending"> {
  return Promise.race([promise, sleep(50).then(() => "pending" as const)]);
}

describe("the in-process client endpoint", () => {
  test("the client sees placements, stops and removals, each alloc in its latest version", async () => {
    const { server } = openTestServer();
    const client = clientEndpoint(server);
    const node = testNode();
    await client.registerNode(node);

    const first = await client.watchAllocs(node.ID, 0);
    expect(first.allocs).toEqual([]);
    expect(first.index).toBeGreaterThan(0);

    const waiting = client.watchAllocs(node.ID, first.index);
    expect(await settled(waiting)).toBe("pending");
    server.jobs.register(testJob("w", { count: 2 }));
    const placed = await waiting;
    expect(placed.allocs.map((alloc) => alloc.Name).sort()).toEqual(["w.web[0]", "w.web[1]"]);
    expect(placed.allocs.every((alloc) => alloc.AllocModifyIndex === placed.index && alloc.Job.ID === "w")).toBe(true);

    // The client's own reports do not wake its watch.
    const next = client.watchAllocs(node.ID, placed.index);
    await client.updateAllocs(
      placed.allocs.map((alloc) => ({
        ID: alloc.ID,
        ClientStatus: "running",
        ClientDescription: "Tasks are running",
        TaskStates: {
          srv: {
            State: "running",
            Failed: false,
            Restarts: 0,
            LastRestart: null,
            StartedAt: "2026-01-01T00:00:00Z",
            FinishedAt: null,
            Events: [{ Type: "Started", Time: 1, Message: "", DisplayMessage: "Task started by client", Details: {} }],
          },
        },
      })),
    );
    expect(await settled(next)).toBe("pending");
    expect(server.allocs.get(placed.allocs[0]!.ID)).toMatchObject({ ClientStatus: "running", ClientDescription: "Tasks are running" });
    expect(server.allocs.get(placed.allocs[0]!.ID).TaskStates?.srv?.Events[0]).toMatchObject({ Type: "Started", DisplayMessage: "Task started by client" });

    server.jobs.deregister("w", true);
    const stopped = await next;
    expect(stopped.allocs.every((alloc) => alloc.DesiredStatus === "stop")).toBe(true);

    await client.updateAllocs(stopped.allocs.map((alloc) => ({ ID: alloc.ID, ClientStatus: "complete" })));
    const removed = client.watchAllocs(node.ID, stopped.index);
    server.collectGarbage(true);
    expect((await removed).allocs).toEqual([]);
  });

  test("a watch ends on abort, on shutdown, and refuses a node that never registered", async () => {
    const { server } = openTestServer();
    const client = clientEndpoint(server);
    const node = testNode();
    await client.registerNode(node);
    const { index } = await client.watchAllocs(node.ID, 0);

    const controller = new AbortController();
    const aborted = client.watchAllocs(node.ID, index, controller.signal);
    controller.abort(new Error("client stopping"));
    await expect(aborted).rejects.toThrow("client stopping");

    await expect(client.watchAllocs("no-such-node", 0)).rejects.toThrow(/node "no-such-node" not found/);

    const closing = client.watchAllocs(node.ID, index);
    server.close();
    const err = await closing.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect((err as ServerError).kind).toBe("unavailable");
  });

  test("client updates are validated, and reports on collected allocs are ignored", async () => {
    const { server } = openTestServer();
    const client = clientEndpoint(server);
    await client.registerNode(testNode());
    await expect(client.updateAllocs([{ ID: "x", ClientStatus: "exploded" as "failed" }])).rejects.toThrow(/allocation update 0: ClientStatus: /);
    const before = server.index;
    await client.updateAllocs([{ ID: "gone", ClientStatus: "complete" }]);
    expect(server.index).toBe(before);
  });
});
