/**
 * Telling a task's connection to the agent from the host's, with real sockets:
 * a client started in a task's cgroups (as the executor places a task) and one
 * from this test process, each asking a server that identifies its peer. Both
 * ways: the v2 cgroup id the kernel tags sockets with, and, for a host without
 * a v2 tree, the socket's inode among the task's processes' descriptors.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import { randomUUID } from "node:crypto";
import type { CgroupLayout } from "../../src/cgroups/detect.ts";
import { cgroupDirs, taskCgroupPaths } from "../../src/cgroups/paths.ts";
import { openTaskCgroup } from "../../src/cgroups/task-cgroup.ts";
import { chooseSocketLookup, TaskPeers, type SocketLookup } from "../../src/client/task-peers.ts";
import { sockDiagUnavailable } from "../../src/runtime/sock-diag.ts";
import { serveHttp } from "../../src/runtime/serve.ts";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { capabilities, waitFor } from "../helpers/index.ts";
import { testCgroupParent } from "../helpers/cgroups.ts";

const layout = capabilities.cgroups;
const hasUnified = layout.mode === "v2" || (layout.mode === "v1" && layout.unified !== undefined);
const BASH = "/bin/bash";
const parent = testCgroupParent();

/** The same host seen without its v2 tree: the fallback through /proc/PID/fd. */
const withoutUnified: CgroupLayout | undefined = layout.mode === "v1" ? { ...layout, unified: undefined } : undefined;

/** A protocol number no sock_diag handler serves: the kernel answers it as it answers TCP without tcp_diag. */
const PROTOCOL_WITHOUT_HANDLER = 253;

/** What the agent picks on a kernel whose sock_diag cannot answer: the real kernel's refusal, not a stand-in. */
const withoutSockDiag = chooseSocketLookup(() => sockDiagUnavailable(PROTOCOL_WITHOUT_HANDLER));

/** A server whose every answer is what `peers` made of the caller. */
function identifyingServer(peers: TaskPeers) {
  return serveHttp(
    (_request, connection) => Response.json(connection.kind === "tcp" ? peers.identify(connection.remote, connection.local) : null),
    "127.0.0.1",
    0,
  );
}

/** A bash /dev/tcp client that joins `dirs` (every cgroup of a task) before it connects. */
async function callFromCgroups(dirs: readonly string[], port: number): Promise<string> {
  const join = dirs.map((dir) => `echo $$ > ${dir}/cgroup.procs`).join("; ");
  const script = `${join}; exec 3<>/dev/tcp/127.0.0.1/${port}; printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3; cat <&3`;
  const child = spawnProcess({ argv: [BASH, "-c", script], env: {}, stdout: "pipe" });
  const text = await new Response(child.stdout).text();
  await child.exited;
  return text.slice(text.indexOf("\r\n\r\n") + 4);
}

describe.skipIf(!capabilities.root || layout.mode === "none" || !existsSync(BASH))("which task is calling", () => {
  const cases: { name: string; layout: CgroupLayout; lookup?: SocketLookup }[] = [
    ...(hasUnified ? [{ name: "by the socket's v2 cgroup id", layout }] : []),
    ...(withoutUnified ? [{ name: "by the socket's inode, without a v2 tree", layout: withoutUnified }] : []),
    { name: "without sock_diag: the socket from /proc/net/tcp, its holder by inode", layout, lookup: withoutSockDiag.lookup },
  ];
  for (const { name, layout: seen, lookup } of cases) {
    test(name, async () => {
      const allocId = randomUUID();
      const paths = taskCgroupPaths(layout, parent, allocId, "web%1")!;
      const cgroup = openTaskCgroup(paths);
      cgroup.create({ cpuMhz: 0, memoryMb: 0, memoryMaxMb: 0, pidsLimit: 0 });
      const peers = new TaskPeers(seen, parent, lookup);
      const server = identifyingServer(peers);
      try {
        expect(JSON.parse(await callFromCgroups(cgroupDirs(paths), server.port))).toEqual({ kind: "task", task: { allocId, taskName: "web%1" } });
        expect(await (await fetch(`http://127.0.0.1:${server.port}/`)).json()).toEqual({ kind: "host" });
      } finally {
        await server.stop(true);
        cgroup.remove();
      }
    });
  }

  test("a kernel without sock_diag for TCP is named, with how to load it", () => {
    expect(withoutSockDiag.missing).toContain("inet_diag");
    expect(withoutSockDiag.missing).toContain("modprobe -a inet_diag tcp_diag");
    expect(chooseSocketLookup().missing).toBeUndefined();
  });

  test("a local peer whose socket is gone, or without an address, is unknown; one from another host is remote", () => {
    for (const lookup of [undefined, withoutSockDiag.lookup]) {
      const peers = new TaskPeers(layout, parent, lookup);
      const local = { address: "127.0.0.1", port: 4646 };
      // A port nothing on this host connected from.
      expect(peers.identify({ address: "127.0.0.1", port: 1 }, local)).toEqual({ kind: "unknown-local" });
      expect(peers.identify({ address: "203.0.113.9", port: 40000 }, local)).toEqual({ kind: "remote" });
      expect(peers.identify({ address: "", port: 0 }, local)).toEqual({ kind: "unknown-local" });
    }
  });

  test("a local peer that closed its socket (no process holds it now) is gone", async () => {
    const peers = new TaskPeers(layout, parent);
    const accepted: Socket[] = [];
    const server = createServer((socket) => accepted.push(socket));
    const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
    try {
      const client = connect(port, "127.0.0.1");
      await new Promise((resolve) => client.once("connect", resolve));
      const peer = { address: "127.0.0.1", port: client.localPort! };
      const local = { address: "127.0.0.1", port };
      expect(peers.identify(peer, local)).toEqual({ kind: "host" });
      client.destroy();
      // The server keeps its end open: the closed client socket lingers, held by no process (FIN_WAIT2).
      await waitFor("the closed socket seen as gone", () => peers.identify(peer, local).kind === "gone");
    } finally {
      for (const socket of accepted) socket.destroy();
      server.close();
    }
  });
});
