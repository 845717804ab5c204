/**
 * Re-executing this program as one of its roles: the one module that knows how
 * (Nomad's "discover"). A compiled binary runs itself with the role as the
 * first argument; in development the Bun binary runs src/main.ts.
 *
 * Internal roles (executor, logmon, nsenter) are only ever started by drover
 * itself. The parent sets a handshake variable that the child checks and then
 * removes, so a person typing `drover executor` gets a clear message and tasks
 * never inherit the variable.
 */
import { isCompiled } from "./detect.ts";

/** Name and value of the handshake variable; the value only has to be unlikely. */
export const ROLE_HANDSHAKE_VAR = "DROVER_ROLE_HANDSHAKE";
const ROLE_HANDSHAKE_VALUE = "e1b2d6c0-drover-internal-role";

// A URL rather than node:path: every role loads this module, and node:path costs each process ~0.1 MiB.
const MAIN_SCRIPT = new URL("../main.ts", import.meta.url).pathname;

/**
 * The running program's file. An upgrade that replaced or removed it leaves
 * the path naming another file or none (the runtime reads the path late, as
 * "<path> (deleted)"): /proc/self/exe still names this very program, and a
 * child about to exec resolves it to the same one.
 */
function selfProgram(): string {
  return process.execPath.endsWith(" (deleted)") ? "/proc/self/exe" : process.execPath;
}

/** The argv that starts this same program with `args` (role first). */
export function selfArgv(args: readonly string[]): string[] {
  if (isCompiled) return [selfProgram(), ...args];
  return [selfProgram(), MAIN_SCRIPT, ...args];
}

/** Environment entries a parent adds so that an internal role accepts its start. */
export function roleHandshakeEnv(): Record<string, string> {
  return { [ROLE_HANDSHAKE_VAR]: ROLE_HANDSHAKE_VALUE };
}

/** Names the fd a role closes once it is ready (SpawnRequest.readyPipe); spawn always puts it at 3. */
export const READY_FD_VAR = "DROVER_READY_FD";
const READY_FD = 3;

export function readyFdEnv(): Record<string, string> {
  return { [READY_FD_VAR]: String(READY_FD) };
}

/**
 * The fd this role closes to tell its parent it is ready, or null when the
 * parent watches none. The variable is deleted so nothing this process starts
 * inherits it.
 */
export function takeReadyFd(): number | null {
  const given = process.env[READY_FD_VAR];
  delete process.env[READY_FD_VAR];
  return given === String(READY_FD) ? READY_FD : null;
}

/**
 * Checks and consumes the handshake: true when the parent was drover. The
 * variable is deleted either way so nothing this process starts inherits it.
 */
export function takeRoleHandshake(): boolean {
  const ok = process.env[ROLE_HANDSHAKE_VAR] === ROLE_HANDSHAKE_VALUE;
  delete process.env[ROLE_HANDSHAKE_VAR];
  return ok;
}
