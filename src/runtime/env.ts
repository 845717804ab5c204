/**
 * The environment every child process gets. Bun honours `BUN_*` variables even
 * in compiled binaries (BUN_OPTIONS can inject flags) and Deno its `DENO_*`
 * ones, so none of them may leak into a task or a helper; neither may the
 * role handshake or the ready fd's name.
 */
import { READY_FD_VAR, ROLE_HANDSHAKE_VAR } from "./self.ts";

export function isRuntimeVariable(name: string): boolean {
  return name.startsWith("BUN_") || name.startsWith("DENO_") || name === ROLE_HANDSHAKE_VAR || name === READY_FD_VAR;
}

/** A copy of `env` without runtime variables and without undefined values. */
export function cleanChildEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isRuntimeVariable(name)) out[name] = value;
  }
  return out;
}
