/** sock_diag: the kernel's record of a connection's other end, looked up by its four addresses and ports. */
import { describe, expect, test } from "bun:test";
import { readdirSync, readlinkSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { lookupTcpSocket } from "../../src/runtime/sock-diag.ts";

/** The socket inodes this process holds (/proc/self/fd links "socket:[N]"). */
function ownSocketInodes(): number[] {
  return readdirSync("/proc/self/fd").flatMap((fd) => {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      return match ? [Number(match[1])] : [];
    } catch {
      return [];
    }
  });
}

describe("looking up a TCP connection's client socket", () => {
  test("finds this process's own end with its owner, inode and state; nothing where no socket is", async () => {
    const accepted: Socket[] = [];
    const server = createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    const client = connect(port, "127.0.0.1");
    await new Promise((resolve) => client.once("connect", resolve));
    try {
      const owner = lookupTcpSocket({ address: "127.0.0.1", port: client.localPort! }, { address: "127.0.0.1", port });
      expect(owner).not.toBeNull();
      expect(owner!.state).toBe(1);
      expect(owner!.uid).toBe(process.getuid!());
      expect(ownSocketInodes()).toContain(owner!.inode);
      expect(typeof owner!.cgroupId).toBe("bigint");
      expect(lookupTcpSocket({ address: "127.0.0.1", port: 1 }, { address: "127.0.0.1", port })).toBeNull();
      expect(lookupTcpSocket({ address: "not an address", port: 1 }, { address: "127.0.0.1", port })).toBeNull();
    } finally {
      client.destroy();
      for (const socket of accepted) socket.destroy();
      server.close();
    }
  });
});
