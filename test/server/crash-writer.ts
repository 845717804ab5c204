/**
 * A server that writes job updates and client reports as fast as it can,
 * for the crash test to SIGKILL at a random moment. Prints "ready" once it
 * has written a few versions. Run: bun crash-writer.ts <data dir> <node id>
 */
import { Server } from "../../src/server/server.ts";
import { ALL_AT_ONCE, testJob, testNode } from "./fixtures.ts";

const [dataDir, nodeId] = process.argv.slice(2) as [string, string];
const server = Server.open({ dataDir, region: "global", hostBoundPorts: () => new Set(), freeBytes: () => 1e12 });
server.nodes.upsert(testNode({ ID: nodeId }));
for (let i = 0; ; i++) {
  // Every version changes the meta, so every register replaces every alloc (at once: no rolling deployment).
  server.jobs.register(testJob("crash", { count: 1 + (i % 5), groups: ["a", "b"], meta: { round: String(i) }, update: ALL_AT_ONCE }));
  const allocs = server.nodes.allocations(nodeId);
  server.allocs.updateFromClient(
    allocs
      .filter((alloc) => alloc.ClientStatus !== "complete")
      .map((alloc) => ({ ID: alloc.ID, ClientStatus: alloc.DesiredStatus === "run" ? ("running" as const) : ("complete" as const) })),
  );
  if (i % 50 === 0) server.collectGarbage(true);
  if (i === 5) console.log("ready");
}
