/**
 * Signal names and numbers (Linux). Job files and API calls name signals
 * ("SIGTERM", "TERM", "15"); processes report numbers.
 */
/**
 * Linux's signal numbers (the same on x86_64 and arm64). A table rather than
 * node:os's constants: the per-task executor needs these, and node:os costs
 * each process that loads it ~0.1 MiB.
 */
const SIGNALS: Readonly<Record<string, number>> = {
  SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGIOT: 6, SIGBUS: 7, SIGFPE: 8,
  SIGKILL: 9, SIGUSR1: 10, SIGSEGV: 11, SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGSTKFLT: 16,
  SIGCHLD: 17, SIGCONT: 18, SIGSTOP: 19, SIGTSTP: 20, SIGTTIN: 21, SIGTTOU: 22, SIGURG: 23, SIGXCPU: 24,
  SIGXFSZ: 25, SIGVTALRM: 26, SIGPROF: 27, SIGWINCH: 28, SIGIO: 29, SIGPOLL: 29, SIGPWR: 30, SIGSYS: 31,
};

/** The signal a task is stopped with when its job names none (Nomad's: os.Interrupt). */
export const DEFAULT_KILL_SIGNAL = "SIGINT";

/** The number of a signal given as "SIGTERM", "TERM", "sigterm" or "15"; throws on anything else. */
export function signalNumber(signal: string | number): number {
  if (typeof signal === "number") {
    if (Number.isInteger(signal) && signal > 0 && signal < 65) return signal;
    throw new Error(`unknown signal ${signal}`);
  }
  const trimmed = signal.trim();
  if (/^\d+$/.test(trimmed)) return signalNumber(Number(trimmed));
  const upper = trimmed.toUpperCase();
  const name = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  const number = SIGNALS[name];
  if (number === undefined) throw new Error(`unknown signal "${signal}"`);
  return number;
}

/** "SIGTERM" for 15; "signal 42" for a number with no name. */
export function signalName(signal: number): string {
  for (const [name, number] of Object.entries(SIGNALS)) if (number === signal) return name;
  return `signal ${signal}`;
}

/** True when `signal` names a signal this platform knows. */
export function isSignal(signal: string): boolean {
  try {
    signalNumber(signal);
    return true;
  } catch {
    return false;
  }
}
