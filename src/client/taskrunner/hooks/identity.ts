/**
 * A task's workload identity, as Nomad 1.x hands it over (identity_hook.go):
 * with the task's `identity { env = true }` the signed JWT is NOMAD_TOKEN in
 * its environment; with `file = true` it is `secrets/nomad_token`, owned by
 * the task's user, mode 0600. Without the block (or both false) the task
 * gets neither. Signed anew at each prestart, so a restarted agent hands the
 * task a token from the keyring it has now.
 */
import { closeSync, constants, fchownSync, openSync, rmSync, writeSync } from "node:fs";
import { lookupUser } from "../../../runtime/libc.ts";
import { taskUser } from "./task-dir.ts";
import type { PrestartRequest, PrestartResponse, TaskHook } from "./hook.ts";

/** The signed identity of a task of an allocation, or undefined where none can be made. */
export type SignIdentity = (allocId: string, task: string) => string | undefined;

export const IDENTITY_FILE = "nomad_token";
const IDENTITY_FILE_MODE = 0o600;

export function identityHook(sign: SignIdentity): TaskHook {
  return {
    name: "identity",
    async prestart(req: PrestartRequest): Promise<PrestartResponse> {
      const wanted = req.task.Identity;
      if (!wanted || (!wanted.Env && !wanted.File)) return {};
      const token = sign(req.alloc.ID, req.task.Name);
      if (token === undefined) throw new Error(`no workload identity for task "${req.task.Name}": the server cannot sign one`);
      if (wanted.File) writeToken(req.taskDir.secrets, token, taskUser(req.task));
      return wanted.Env ? { env: { NOMAD_TOKEN: token } } : {};
    },
  };
}

/** Writes the token through a descriptor of secrets/, never following a link the task put there. */
function writeToken(secrets: string, token: string, user: string | undefined): void {
  const dir = openSync(secrets, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const path = `/proc/self/fd/${dir}/${IDENTITY_FILE}`;
    rmSync(path, { force: true });
    const file = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, IDENTITY_FILE_MODE);
    try {
      writeSync(file, token);
      const owner = user === undefined ? null : lookupUser(user);
      if (owner) fchownSync(file, owner.uid, owner.gid);
    } finally {
      closeSync(file);
    }
  } finally {
    closeSync(dir);
  }
}
