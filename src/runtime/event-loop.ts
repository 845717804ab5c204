/**
 * What Bun's event loop waits on, for code that must block the JS thread in
 * poll(2) (Bun offers no readiness callback for arbitrary fds) yet answer
 * sockets promptly.
 *
 * Bun's loop waits on an epoll descriptor. An epoll fd polls readable while
 * its loop has work (a socket's data, a signal, a wake-up from another
 * thread), so such code includes it in its poll set and yields as soon as
 * the event loop has something to do.
 */
import { readdirSync, readlinkSync } from "node:fs";

/** The epoll descriptors of this process; empty where none can be seen (poll with a short timeout then). */
export function eventLoopPollFds(): number[] {
  const fds: number[] = [];
  for (const name of readdirSync("/proc/self/fd")) {
    try {
      if (readlinkSync(`/proc/self/fd/${name}`) === "anon_inode:[eventpoll]") fds.push(Number(name));
    } catch {
      // Closed while we looked (the listing's own fd, for one).
    }
  }
  return fds;
}
