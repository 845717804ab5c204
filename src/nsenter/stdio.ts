/**
 * The task's stdout and stderr, named as the task sees them. The executor
 * opens them on the host (<alloc>/alloc/logs/.<task>.stdout.fifo), so
 * /proc/self/fd/1 would read as that host path, data dir included. Once the
 * root is built, the role opens the same file again through /alloc and puts
 * that descriptor in place of the host's; the kernel then names it
 * /alloc/logs/... An output that is not under the alloc dir (a pipe, a file
 * elsewhere) is left as it is.
 */
import { closeSync, constants, fstatSync, openSync, readlinkSync } from "node:fs";
import { dup2, F_GETFL, F_SETFL, fcntl } from "../runtime/libc.ts";
import { must } from "./errors.ts";

const O_ACCMODE = 0o3;
/** Open flags kept from the executor's descriptor: the access mode, append and non-blocking. */
const KEPT_FLAGS = O_ACCMODE | constants.O_APPEND | constants.O_NONBLOCK;

export interface HostOutput {
  fd: 1 | 2;
  /** The same file's path inside the task. */
  inside: string;
  dev: bigint;
  ino: bigint;
  flags: number;
}

/** Which of fds 1 and 2 are files under `allocDir`; read before the host's paths go away. */
export function hostStdio(allocDir: string): HostOutput[] {
  const outputs: HostOutput[] = [];
  for (const fd of [1, 2] as const) {
    let path: string;
    try {
      path = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (!path.startsWith(`${allocDir}/`)) continue;
    const { dev, ino } = fstatSync(fd, { bigint: true });
    outputs.push({ fd, inside: `/alloc${path.slice(allocDir.length)}`, dev, ino, flags: fcntl(fd, F_GETFL) & KEPT_FLAGS });
  }
  return outputs;
}

/** After pivot_root: each output reopened through /alloc, if that reaches the same file. */
export function reopenStdio(outputs: readonly HostOutput[]): void {
  for (const output of outputs) {
    let fd: number;
    try {
      // Non-blocking, so a FIFO without a reader fails (ENXIO) rather than hanging the launch.
      fd = openSync(output.inside, output.flags | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    } catch {
      continue;
    }
    try {
      const { dev, ino } = fstatSync(fd, { bigint: true });
      if (dev !== output.dev || ino !== output.ino) continue;
      must(fcntl(fd, F_SETFL, output.flags), `set the flags of ${output.inside}`);
      must(dup2(fd, output.fd), `reopen fd ${output.fd} as ${output.inside}`);
    } finally {
      closeSync(fd);
    }
  }
}
