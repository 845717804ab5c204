/**
 * One interactive exec session between a client's frames (Nomad's exec
 * protocol, structs/exec-stream.ts) and the command's stdio, which this
 * process holds directly (the executor handed it over):
 *
 *   client {"stdin":{"data"}} ───────> the command's stdin (terminal master or pipe)
 *   client {"stdin":{"close":true}} ─> stdin's pipe closed: the command reads an end of file
 *                                      (a terminal has no end of input; ignored there)
 *   client {"tty_size":{...}} ───────> the terminal's size (the command gets SIGWINCH)
 *   command's stdout / stderr ───────> {"stdout":{"data"}} ... {"stdout":{"close":true}}
 *   command exits, output drained ───> {"exited":true,"result":{"exit_code":N}}: done
 *   client hangs up first ───────────> the command and its process group are killed: done
 *
 * Output is read only as fast as `send` takes it, so a slow client slows the
 * command (its pipe fills) instead of this process buffering without bound.
 */
import { settlesWithin } from "../../lib/timeout.ts";
import { descriptorWriter, readDescriptor } from "../../runtime/fd-stream.ts";
import { setWindowSize, sysClose } from "../../runtime/libc.ts";
import type { ExecSession } from "../../drivers/driver.ts";
import type { ExecInputFrame, ExecOutputFrame } from "../../structs/exec-stream.ts";

/**
 * After the command exits, how long its output may take to reach its end.
 * A process it left running in the background may hold the pipe (or the
 * terminal) open forever; the session ends anyway, without the rest.
 */
export const EXEC_OUTPUT_DRAIN_MS = 2_000;

export interface ExecRelay {
  /** A frame from the client. */
  input(frame: ExecInputFrame): void;
  /** The client went away: the command is killed and the relay ends. */
  hangUp(): void;
  /** Settles once the exit frame was sent (or the client hung up) and every descriptor is closed; rejects when the executor went away. */
  readonly done: Promise<void>;
}

type Output = { name: "stdout" | "stderr"; fd: number };

export function relayExecSession(session: ExecSession, send: (frame: ExecOutputFrame) => void | Promise<void>): ExecRelay {
  const { streams } = session;
  const terminal = "terminal" in streams ? streams.terminal : null;
  const outputs: Output[] =
    "terminal" in streams ? [{ name: "stdout", fd: streams.terminal }] : [{ name: "stdout", fd: streams.stdout }, { name: "stderr", fd: streams.stderr }];
  // A terminal is one descriptor both ways.
  let stdinFd: number | null = "terminal" in streams ? streams.terminal : streams.stdin;
  const stdin = descriptorWriter(stdinFd);
  const stopReading = new AbortController();
  let hungUp = false;
  let finished = false;

  const readers = outputs.map(async ({ name, fd }) => {
    await readDescriptor(fd, (chunk) => send({ [name]: { data: Buffer.from(chunk).toString("base64") } }), stopReading.signal);
    if (!stopReading.signal.aborted) await send({ [name]: { close: true } });
  });

  const closeStdin = () => {
    stdin.stop();
    if (stdinFd !== null && stdinFd !== terminal) sysClose(stdinFd);
    stdinFd = null;
  };

  const done = (async () => {
    try {
      const exit = await session.exited;
      if (!(await settlesWithin(Promise.all(readers), EXEC_OUTPUT_DRAIN_MS))) stopReading.abort();
      await Promise.allSettled(readers);
      if (!hungUp) await send({ exited: true, result: { exit_code: exit.exitCode } });
    } finally {
      stopReading.abort();
      await Promise.allSettled(readers);
      closeStdin();
      for (const { fd } of outputs) sysClose(fd);
      finished = true;
    }
  })();

  return {
    input(frame) {
      if (frame.stdin?.data && stdinFd !== null) stdin.write(Buffer.from(frame.stdin.data, "base64"));
      if (frame.stdin?.close && terminal === null && stdinFd !== null) closeStdin();
      if (frame.tty_size && terminal !== null && stdinFd !== null) setWindowSize(terminal, frame.tty_size.height, frame.tty_size.width);
    },
    hangUp() {
      if (hungUp || finished) return;
      hungUp = true;
      stopReading.abort();
      void session.kill().catch(() => undefined);
    },
    done,
  };
}
