/** Who an executor or the log pump lets in, judged by the peer's credentials and cgroup. */
import { describe, expect, test } from "bun:test";
import { chmodSync } from "node:fs";
import { agentSideOnly, taskOfProcess } from "../../src/rpc/peer-check.ts";
import { connectUnix, listenUnix } from "../../src/runtime/unix.ts";
import { peerCredentials } from "../../src/runtime/libc.ts";
import { capabilities, tempDir, waitFor } from "../helpers/index.ts";

describe("the agent's side only", () => {
  const me = { pid: process.pid, uid: process.geteuid!(), gid: process.getegid!() };

  test("this process (no task's cgroup, its own user) is let in", () => {
    expect(taskOfProcess(process.pid)).toBeNull();
    expect(agentSideOnly()(me)).toBeNull();
  });

  test("another user, no credentials, or a process already gone are turned away, each saying why", () => {
    const refusals: string[] = [];
    const admit = agentSideOnly((why) => refusals.push(why), 1000);
    expect(admit({ ...me, uid: 65534 })).toBe(`pid ${process.pid} runs as uid 65534, neither root nor this process's user`);
    expect(admit(null)).toBe("the kernel gave no credentials for the peer");
    expect(admit({ pid: 2 ** 22 + 1, uid: 0, gid: 0 })).toContain("was gone before it could be checked");
    expect(refusals).toHaveLength(3);
  });

  test.skipIf(!capabilities.root)("the kernel's record of a peer: a client running as nobody is seen as nobody", async () => {
    const dir = tempDir();
    const path = `${dir}/s.sock`;
    const seen: (ReturnType<typeof peerCredentials> | null)[] = [];
    const server = listenUnix(path, { data: () => {} }, (peer) => (seen.push(peer), null));
    let child: ReturnType<typeof Bun.spawn> | undefined;
    try {
      await connectUnix(path, { data: () => {} });
      await waitFor("this process seen", () => seen.length === 1);
      expect(seen[0]).toEqual({ pid: process.pid, uid: 0, gid: 0 });
      // Opened up for this one client: the directory and the socket are the owner's alone otherwise.
      chmodSync(dir, 0o755);
      chmodSync(path, 0o777);
      const script = `await Bun.connect({ unix: ${JSON.stringify(path)}, socket: { data() {} } }); await Bun.sleep(60000);`;
      child = Bun.spawn([process.execPath, "-e", script], { uid: 65534, gid: 65534, env: { PATH: "/usr/bin:/bin", HOME: "/tmp" } });
      await waitFor("the child seen", () => seen.length === 2);
      expect(seen[1]).toMatchObject({ pid: child.pid, uid: 65534, gid: 65534 });
    } finally {
      child?.kill();
      server.stop();
    }
  });
});
