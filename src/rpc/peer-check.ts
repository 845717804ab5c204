/**
 * Who may talk to an executor or the log pump: the agent's side only. The
 * sockets live in directories only their owner can enter (0700), and each
 * connection's peer, as the kernel recorded it (SO_PEERCRED), must be
 *
 *   root or this process's own user   (exec tasks run as nobody, or as `user`)
 *   and no process of a task           (its cgroup is not a task's: a raw_exec
 *                                       task running as root may not drive
 *                                       its own executor, or another's)
 *
 * A root task can leave its cgroup, or ptrace the agent: root on the host
 * is root. What this stops is a task that simply opens a socket it finds.
 */
import { taskOfLeaf } from "../cgroups/paths.ts";
import { readTextFile, type PeerCredentials } from "../runtime/libc.ts";
import type { Admission } from "../runtime/unix.ts";

/** Alloc IDs are UUIDs: a task's cgroup leaf starts with one. */
const ALLOC_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The task whose cgroup `pid` is in (on any hierarchy), or null; "gone" when the process no longer exists. */
export function taskOfProcess(pid: number): string | null | "gone" {
  let text: string;
  try {
    text = readTextFile(`/proc/${pid}/cgroup`);
  } catch {
    return "gone";
  }
  for (const line of text.split("\n")) {
    const path = line.slice(line.indexOf(":", line.indexOf(":") + 1) + 1);
    for (const segment of path.split("/")) {
      const task = taskOfLeaf(segment);
      if (task && ALLOC_ID.test(task.allocId)) return `${task.allocId}/${task.taskName}`;
    }
  }
  return null;
}

/** The admission rule above; `refused` hears why a peer was turned away. */
export function agentSideOnly(refused: (why: string) => void = () => {}, ownUid = process.geteuid?.() ?? 0): Admission {
  return (peer: PeerCredentials | null) => {
    const why = refusal(peer, ownUid);
    if (why !== null) refused(why);
    return why;
  };
}

function refusal(peer: PeerCredentials | null, ownUid: number): string | null {
  if (!peer) return "the kernel gave no credentials for the peer";
  if (peer.uid !== 0 && peer.uid !== ownUid) return `pid ${peer.pid} runs as uid ${peer.uid}, neither root nor this process's user`;
  const task = taskOfProcess(peer.pid);
  if (task === "gone") return `pid ${peer.pid} was gone before it could be checked`;
  if (task !== null) return `pid ${peer.pid} is a process of task ${task}`;
  return null;
}
