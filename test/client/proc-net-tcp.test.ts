/** /proc/net/tcp{,6}: the same socket sock_diag finds, where the kernel offers no sock_diag. */
import { describe, expect, test } from "bun:test";
import { connect, createServer, type Socket } from "node:net";
import { lookupTcpSocketInProcfs } from "../../src/client/proc-net-tcp.ts";
import { lookupTcpSocket, sockDiagUnavailable } from "../../src/runtime/sock-diag.ts";

/** A protocol number no sock_diag handler serves. */
const PROTOCOL_WITHOUT_HANDLER = 253;

describe("looking up a TCP connection's client socket in /proc/net/tcp", () => {
  for (const loopback of ["127.0.0.1", "::1"]) {
    test(`over ${loopback}: the state, owner and inode sock_diag reports; nothing where no socket is`, async () => {
      const accepted: Socket[] = [];
      const server = createServer((socket) => accepted.push(socket));
      await new Promise<void>((resolve) => server.listen(0, loopback, resolve));
      const port = (server.address() as { port: number }).port;
      const client = connect(port, loopback);
      await new Promise((resolve) => client.once("connect", resolve));
      try {
        const peer = { address: loopback, port: client.localPort! };
        const found = lookupTcpSocketInProcfs(peer, { address: loopback, port });
        const { cgroupId: _, ...expected } = lookupTcpSocket(peer, { address: loopback, port })!;
        expect(found).toEqual({ ...expected, cgroupId: undefined });
        expect(found!.inode).toBeGreaterThan(0);
        expect(lookupTcpSocketInProcfs({ address: loopback, port: 1 }, { address: loopback, port })).toBeNull();
        expect(lookupTcpSocketInProcfs({ address: "not an address", port: 1 }, { address: loopback, port })).toBeNull();
      } finally {
        client.destroy();
        for (const socket of accepted) socket.destroy();
        server.close();
      }
    });
  }
});

describe("whether sock_diag can answer", () => {
  test("it can for TCP here; a protocol without a handler is reported as the kernel refused it", () => {
    expect(sockDiagUnavailable()).toBeNull();
    expect(sockDiagUnavailable(PROTOCOL_WITHOUT_HANDLER)).toContain("errno 2");
  });
});
