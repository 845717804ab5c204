/**
 * Interactive exec sessions (`alloc exec` over a websocket). The executor
 * starts the command in the task's context on stdio it makes itself (a
 * terminal, or three pipes) and hands the other ends to the agent, which
 * moves the bytes: a session's output never passes through the executor,
 * which only starts, reaps and kills.
 *
 *   execStart ──> started: the command runs; the executor holds the agent's ends
 *      │          (terminal master, or stdin's write end and stdout's and stderr's read ends)
 *      │   the agent copies them (pidfd_getfd)
 *   execWait ───> claimed: the executor closes its copies, so the agent's are the only
 *      │          ones (its stdin close is an end of file); answers once the command exits
 *      ▼
 *   ended
 *
 *   execKill, the starting connection closing, or no execWait within
 *   EXEC_CLAIM_TIMEOUT_MS ──> SIGKILL to the command's process group, copies closed
 *
 * Loaded on the first session only: an executor that never runs one does not
 * pay for this module.
 */
import type { Peer } from "../rpc/server.ts";
import { O_CLOEXEC_FLAG, pipe2, sysClose } from "../runtime/libc.ts";
import type { ChildProcess, ExitStatus } from "../runtime/spawn.ts";
import type { ExecStartResult } from "./protocol.ts";
import { killGroup } from "./tree.ts";

/**
 * How long the agent may take from execStart to execWait. It only copies a
 * few descriptors in between (well under a millisecond); a session nobody
 * claims is killed rather than left running with no one to read it.
 */
export const EXEC_CLAIM_TIMEOUT_MS = 10_000;

/** The command's side of its stdio: what it gets as fds 0, 1 and 2. */
export interface SessionStdio {
  stdin: number;
  stdout: number;
  stderr: number;
  /** The three are one terminal, which the command takes as its controlling terminal. */
  terminal: boolean;
}

/**
 * Makes the session's stdio: a terminal from `openTerminal` ([master, slave]),
 * or three pipes. Returns the command's side and the agent's ends; every
 * descriptor is close-on-exec (the spawn hands the command its own).
 */
export async function sessionStdio(openTerminal: (() => Promise<[number, number]>) | null): Promise<{ command: SessionStdio; agent: number[] }> {
  if (openTerminal) {
    const [master, slave] = await openTerminal();
    return { command: { stdin: slave, stdout: slave, stderr: slave, terminal: true }, agent: [master] };
  }
  const made: number[] = [];
  try {
    const [stdinRead, stdinWrite] = pipe2(O_CLOEXEC_FLAG);
    made.push(stdinRead, stdinWrite);
    const [stdoutRead, stdoutWrite] = pipe2(O_CLOEXEC_FLAG);
    made.push(stdoutRead, stdoutWrite);
    const [stderrRead, stderrWrite] = pipe2(O_CLOEXEC_FLAG);
    made.push(stderrRead, stderrWrite);
    return { command: { stdin: stdinRead, stdout: stdoutWrite, stderr: stderrWrite, terminal: false }, agent: [stdinWrite, stdoutRead, stderrRead] };
  } catch (err) {
    closeAll(made);
    throw err;
  }
}

/** Closes the command's side once it has its own copies (or failed to start). */
export function releaseCommandSide(stdio: SessionStdio): void {
  closeAll(new Set([stdio.stdin, stdio.stdout, stdio.stderr]));
}

function closeAll(fds: Iterable<number>): void {
  for (const fd of fds) {
    try {
      sysClose(fd);
    } catch {
      // Closing is all that is left to do; an error here changes nothing.
    }
  }
}

interface Session {
  child: ChildProcess;
  /** The executor's copies of the agent's ends; null once closed. */
  agentFds: number[] | null;
  exited: Promise<ExitStatus>;
  /** Set once the command is reaped: from then on its pid may name another process. */
  reaped: boolean;
  claimTimer: ReturnType<typeof setTimeout>;
}

export type SessionLog = (line: string) => void;

export class ExecSessions {
  private nextId = 1;
  private readonly sessions = new Map<number, Session>();

  constructor(private readonly log: SessionLog) {}

  /** Registers a started command; it is killed when `owner` hangs up or nobody claims it in time. */
  add(child: ChildProcess, agentFds: number[], owner: Peer): ExecStartResult {
    const id = this.nextId++;
    const session: Session = {
      child,
      agentFds,
      exited: child.exited,
      reaped: false,
      claimTimer: setTimeout(() => {
        this.log(`exec session ${id} (pid ${child.pid}) was not claimed within ${EXEC_CLAIM_TIMEOUT_MS} ms; killing it`);
        this.kill(id);
      }, EXEC_CLAIM_TIMEOUT_MS),
    };
    session.exited.then(() => {
      session.reaped = true;
    });
    this.sessions.set(id, session);
    owner.onClose(() => this.kill(id));
    return { session: id, pid: child.pid, fds: [...agentFds] };
  }

  /** Closes the executor's copies of the agent's ends, then answers with how the command ended. */
  async wait(id: number): Promise<ExitStatus> {
    const session = this.get(id);
    clearTimeout(session.claimTimer);
    this.closeCopies(session);
    try {
      return await session.exited;
    } finally {
      this.sessions.delete(id);
    }
  }

  /** Ends the session's command and whatever it started in its process group; a session already gone is fine. */
  kill(id: number): void {
    const session = this.sessions.get(id);
    if (!session) return;
    clearTimeout(session.claimTimer);
    // Its own group (spawned detached); signalled only while the command is unreaped.
    if (!session.reaped) killGroup(session.child.pid);
    this.closeCopies(session);
    this.sessions.delete(id);
  }

  private get(id: number): Session {
    const session = this.sessions.get(id);
    if (!session) throw new Error(`no exec session ${id}`);
    return session;
  }

  private closeCopies(session: Session): void {
    if (session.agentFds) closeAll(session.agentFds);
    session.agentFds = null;
  }
}
