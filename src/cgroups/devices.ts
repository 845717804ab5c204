/**
 * The devices an exec task may use (v1: the devices controller; v2: a device
 * program, device-filter.ts), Docker's default list: it may make any node
 * (mknod is a capability question, and every writable mount is nodev anyway),
 * but read or write only these.
 */

/** "type major:minor access" rules for devices.allow, in that file's syntax. */
export const DEVICE_ALLOW_LIST: readonly string[] = [
  "c *:* m",
  "b *:* m",
  "c 1:3 rwm", // null
  "c 1:5 rwm", // zero
  "c 1:7 rwm", // full
  "c 1:8 rwm", // random
  "c 1:9 rwm", // urandom
  "c 5:0 rwm", // tty
  "c 5:1 rwm", // console
  "c 5:2 rwm", // ptmx
  "c 136:* rwm", // pseudo-terminals (/dev/pts/N)
];
