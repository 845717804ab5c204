/**
 * The running program's file (the compiled binary, or the runtime running
 * src/main.ts), for the runtime halves' self re-exec. An upgrade that
 * replaced or removed it leaves the path naming another file or none (the
 * runtime reads the path late, as "<path> (deleted)"): /proc/self/exe still
 * names this very program, and a child about to exec resolves it to the same
 * one.
 */
export function selfProgram(): string {
  return process.execPath.endsWith(" (deleted)") ? "/proc/self/exe" : process.execPath;
}
