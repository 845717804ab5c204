/**
 * Re-executing this program as one of its roles: the one module that knows how
 * (Nomad's "discover"). A compiled binary runs itself with the role as the
 * first argument; in development the runtime runs src/main.ts (`bun
 * src/main.ts`, `deno run -A src/main.ts`), as the runtime's half says.
 *
 * Internal roles (executor, logmon, nsenter) are only ever started by drover
 * itself. The parent sets a handshake variable that the child checks and then
 * removes, so a person typing `drover executor` gets a clear message and tasks
 * never inherit the variable.
 */

/** Name and value of the handshake variable; the value only has to be unlikely. */
export const ROLE_HANDSHAKE_VAR = "DROVER_ROLE_HANDSHAKE";
const ROLE_HANDSHAKE_VALUE = "e1b2d6c0-drover-internal-role";

/** The argv that starts this same program with `args` (role first). */
export type SelfArgv = (args: readonly string[]) => string[];

export { selfArgv } from "@drover/runtime/self.ts";

/**
 * Engine settings for a role that idles almost all its life and exists once
 * per task (the executor). Both engines read them at start, each its own and
 * not the other's, so the same set serves whichever runtime the role runs on.
 *
 * Bun (JavaScriptCore): no optimizing JIT tier, no concurrent GC or JIT
 * threads, and freed memory returned at once. Measured on 20 executors: 0.22
 * MiB less private memory each, 2 threads instead of 5. Bun's `--smol` (a
 * small heap, collected sooner): ~0.5 MiB less anonymous memory in an
 * executor holding 16 tasks (5.1 -> 4.6 MiB), its launches no slower
 * (docs/performance.md, helpers' memory). Children never inherit BUN_OPTIONS
 * (runtime/env.ts), so a task does not run small.
 *
 * Deno (V8): no concurrent compiler or GC threads, and no optimizing tiers.
 */
export const IDLE_ROLE_ENGINE_ENV: Readonly<Record<string, string>> = {
  BUN_JSC_useDFGJIT: "0",
  BUN_JSC_useConcurrentJIT: "0",
  BUN_JSC_useConcurrentGC: "0",
  BUN_JSC_numberOfGCMarkers: "1",
  MIMALLOC_PURGE_DELAY: "0",
  BUN_OPTIONS: "--smol",
  DENO_V8_FLAGS: "--single-threaded,--lite-mode",
};

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
