/** runtime/spawn.ts on Bun: Bun.spawn does everything a request asks in the child, before exec. */
import { signalNumber } from "../../lib/signals.ts";
import { sysClose } from "../libc.ts";
import type { ExitStatus, Launch, UntilClosed } from "../spawn.ts";

export const launch: Launch = (req) => {
  const proc = Bun.spawn({
    cmd: [...req.argv],
    env: req.env,
    cwd: req.cwd,
    stdio: [...req.stdio, ...req.extraFds],
    detached: req.detached,
    cgroup: req.cgroup,
    uid: req.uid,
    gid: req.gid,
  });
  const exited = proc.exited.then(
    (code): ExitStatus => ({
      exitCode: proc.signalCode ? 128 + signalNumber(proc.signalCode) : code,
      signal: proc.signalCode ? signalNumber(proc.signalCode) : 0,
    }),
  );
  return {
    pid: proc.pid,
    exited,
    stdout: proc.stdout instanceof ReadableStream ? proc.stdout : null,
    stderr: proc.stderr instanceof ReadableStream ? proc.stderr : null,
    kill: (signal) => proc.kill(signal),
    unref: () => proc.unref(),
  };
};

export const untilClosed: UntilClosed = async (fd) => {
  const reader = Bun.file(fd).stream().getReader();
  try {
    while (!(await reader.read()).done);
  } finally {
    sysClose(fd);
  }
};
