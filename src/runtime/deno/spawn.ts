/**
 * runtime/spawn.ts on Deno, through node:child_process (Deno.Command cannot
 * hand a child numbered descriptors or start a session). What Deno does not
 * do as drover needs, and what is done about it:
 *
 *   cgroup                no option: the child is started from inside the
 *                         cgroup (cgroup-placement.ts)
 *   fds 0-2 given by      Deno dup()s them without close-on-exec, so the child
 *   number                would keep a stray copy of each: they go in as fds
 *                         3 and up instead (which Deno places exactly), and
 *                         /bin/sh moves them down and execs the program
 *   extra fds             Deno dup2()s each into place and then closes the
 *                         source in the child: a source given twice, or one
 *                         that a slot before it overwrites, would be lost.
 *                         Each source is passed once, from above the slots.
 *                         Deno also names them in DENO_EXTRA_STDIO_FDS: the
 *                         same sh unsets it
 *   Deno's own fds        some lack close-on-exec: everything from 3 up is
 *                         marked close-on-exec before each spawn
 *
 * The sh step costs about a millisecond and keeps the pid: the program execs
 * in its place. Deno reaps the children it starts, as Bun does.
 */
import { spawn } from "node:child_process";
import { Readable } from "node:stream";
import { signalNumber } from "../../lib/signals.ts";
import { cloexecFrom, errno, F_DUPFD_CLOEXEC, fcntl, strerror, sysClose } from "../libc.ts";
import type { ExitStatus, Launch, LaunchRequest, Stdio, UntilClosed } from "../spawn.ts";
import { blockingCalls } from "./blocking-calls.ts";
import { spawnInCgroup } from "./cgroup-placement.ts";

type NodeStdio = "ignore" | "inherit" | "pipe" | number;

/** The highest descriptor sh's redirections take (one digit). */
const SH_MAX_FD = 9;

interface Plan {
  argv: readonly string[];
  stdio: NodeStdio[];
  /** Copies made for the spawn, closed after it. */
  temporary: number[];
}

/** argv and stdio for node:child_process, with numbered fds 0-2 moved through sh when there are any. */
function plan(req: LaunchRequest): Plan {
  const extra: number[] = [...req.extraFds];
  const moves: string[] = [];
  const slotOf = (fd: number) => {
    if (!extra.includes(fd)) extra.push(fd);
    return 3 + extra.indexOf(fd);
  };
  const std = req.stdio.map((stdio: Stdio, fd): NodeStdio => {
    if (typeof stdio !== "number") return stdio;
    moves.push(`${fd}>&${slotOf(stdio)}`);
    return "ignore";
  });
  if (extra.length === 0) return { argv: req.argv, stdio: std, temporary: [] };
  const top = 2 + extra.length;
  if (top > SH_MAX_FD) throw new Error(`spawn ${req.argv[0]}: too many descriptors to pass`);
  const temporary: number[] = [];
  const sources = extra.map((fd) => {
    if (fd > top) return fd;
    const copy = fcntl(fd, F_DUPFD_CLOEXEC, top + 1);
    if (copy < 0) throw new Error(`spawn ${req.argv[0]}: cannot copy fd ${fd}: ${strerror(errno())}`);
    temporary.push(copy);
    return copy;
  });
  const closes = extra.map((_, i) => 3 + i).filter((slot) => slot > 2 + req.extraFds.length).map((slot) => `${slot}>&-`);
  const script = `unset DENO_EXTRA_STDIO_FDS; exec "$@" ${[...moves, ...closes].join(" ")}`;
  return { argv: ["/bin/sh", "-c", script, "sh", ...req.argv], stdio: [...std, ...sources], temporary };
}

export const launch: Launch = (req) => {
  const { argv, stdio, temporary } = plan(req);
  cloexecFrom(3);
  const start = () =>
    spawn(argv[0]!, argv.slice(1), {
      env: req.env,
      cwd: req.cwd,
      stdio,
      detached: req.detached,
      ...(req.uid === undefined ? {} : { uid: req.uid }),
      ...(req.gid === undefined ? {} : { gid: req.gid }),
    });
  let child: ReturnType<typeof start>;
  try {
    child = req.cgroup ? spawnInCgroup(req.cgroup, start) : start();
  } finally {
    for (const fd of temporary) sysClose(fd);
  }
  if (child.pid === undefined) {
    // node:child_process reports a failed start as a later "error" event.
    child.on("error", () => {});
    throw new Error(`spawn ${req.argv[0]}: could not start`);
  }
  const pid = child.pid;
  let done = false;
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once("exit", (code, signal) => {
      done = true;
      const number = signal ? signalNumber(signal) : 0;
      resolve({ exitCode: number ? 128 + number : (code ?? 0), signal: number });
    });
  });
  const web = (stream: Readable | null) => (stream ? (Readable.toWeb(stream) as ReadableStream<Uint8Array>) : null);
  return {
    pid,
    exited,
    stdout: web(child.stdout),
    stderr: web(child.stderr),
    // Once reaped, the pid may name another process: signal only before. Not child.kill():
    // Deno then reports the signal sent as the cause of any exit, even a clean one.
    kill: (signal) => {
      if (!done) process.kill(pid, signal ?? "SIGTERM");
    },
    unref: () => child.unref(),
  };
};

/** Deno's node:fs knows only the descriptors it opened itself; this pipe comes from pipe2. */
export const untilClosed: UntilClosed = async (fd) => {
  const buffer = new Uint8Array(64);
  try {
    while (Number(await blockingCalls().read(fd, buffer, buffer.length)) > 0);
  } finally {
    sysClose(fd);
  }
};
