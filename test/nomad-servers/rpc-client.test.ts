/**
 * Calls to servers that fail: one that refuses connections and one that
 * accepts them but never answers are both given up on (the second after the
 * call's timeout), and moved to the back of the list so the next call tries
 * another server.
 */
import { afterAll, expect, test } from "bun:test";
import { createServer, type Socket } from "node:net";
import { NomadRpc } from "../../src/nomad-servers/rpc-client.ts";
import { ServerList } from "../../src/nomad-servers/servers.ts";
import { RpcError } from "../../src/nomad-servers/wire/net-rpc.ts";
import { silentLogger } from "../client/fixtures.ts";
import { freePort } from "../helpers/index.ts";

const sockets: Socket[] = [];
const hung = createServer((socket) => sockets.push(socket));
const hungPort = await new Promise<number>((resolve) => hung.listen(0, "127.0.0.1", () => resolve((hung.address() as { port: number }).port)));
afterAll(() => {
  for (const socket of sockets) socket.destroy();
  hung.close();
});

test("a server that refuses and one that never answers are given up on and moved back", async () => {
  const refused = `127.0.0.1:${await freePort()}`;
  const silent = `127.0.0.1:${hungPort}`;
  const servers = new ServerList([refused, silent]);
  const rpc = new NomadRpc(servers, silentLogger);
  const failure = await rpc.call("Status.Ping", {}, { timeoutMs: 200 }).catch((err: unknown) => err);
  rpc.close();
  expect(failure).toBeInstanceOf(Error);
  expect(failure).not.toBeInstanceOf(RpcError);
  // The refusing one is first: the silent one is reached only by moving on, and reached again (a new
  // connection each time) only because its unanswered call was given up on and the other tried meanwhile.
  expect(sockets.length).toBeGreaterThanOrEqual(2);
}, 20_000);
