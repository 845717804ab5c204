/** Resource limits by the names job files use ("nofile"), and their setrlimit(2) numbers. */

/** RLIMIT_* numbers on Linux (x86_64 and arm64 share them). */
export const RLIMIT_NUMBERS = {
  cpu: 0,
  fsize: 1,
  data: 2,
  stack: 3,
  core: 4,
  rss: 5,
  nproc: 6,
  nofile: 7,
  memlock: 8,
  as: 9,
  locks: 10,
  sigpending: 11,
  msgqueue: 12,
  nice: 13,
  rtprio: 14,
  rttime: 15,
} as const;
export type RlimitName = keyof typeof RLIMIT_NUMBERS;
export const RLIMIT_NAMES = Object.keys(RLIMIT_NUMBERS) as RlimitName[];
