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

/** Docker's ulimit text: "n" (soft and hard alike) or "soft:hard", whole numbers. */
export function parseUlimit(text: string): { soft: number; hard: number } | { problem: string } {
  const match = /^(\d+)(?::(\d+))?$/.exec(text.trim());
  if (!match) return { problem: `"${text}" must be "n" or "soft:hard", whole numbers` };
  const soft = Number(match[1]);
  const hard = match[2] === undefined ? soft : Number(match[2]);
  if (!Number.isSafeInteger(soft) || !Number.isSafeInteger(hard)) return { problem: `"${text}" is too large` };
  if (soft > hard) return { problem: `"${text}": the soft limit exceeds the hard limit` };
  return { soft, hard };
}
