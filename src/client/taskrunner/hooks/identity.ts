/**
 * A task's workload identities, as Nomad 1.7's identity hook hands them over
 * (client/allocrunner/taskrunner/identity_hook.go):
 *
 *   default  identity { env file }           NOMAD_TOKEN, secrets/nomad_token
 *   named    identity { name = "x" env file } NOMAD_TOKEN_x, secrets/nomad_x.jwt
 *
 * A file belongs to the task's user, mode 0600 (a docker task's user is the
 * image's, known to its driver only: its file belongs to whoever the driver
 * gave secrets/ to, so a renewed token stays readable). An identity with neither
 * env nor file is given to nobody (Nomad's are for Consul or Vault). Each is
 * signed anew at every prestart, so a restarted task (or agent) gets tokens
 * of the keyring's active key.
 *
 * A named identity with a ttl expires (`exp`): once the task runs, it is
 * signed again when half its life is gone, the file rewritten, and its
 * change_mode acts: noop (the file only: a process's environment cannot
 * change), restart (the task restarts and gets new tokens, env too), signal
 * (change_signal).
 */
import { closeSync, constants, fchownSync, fstatSync, openSync, rmSync, writeSync } from "node:fs";
import { NS_PER_MS } from "../../../lib/units.ts";
import { lookupUser } from "../../../runtime/libc.ts";
import { DEFAULT_IDENTITY, type IdentitySpec, type WorkloadIdentity } from "../../../structs/job.ts";
import { TASK_EVENT } from "../../../structs/task-state.ts";
import { taskEvent } from "../task-state.ts";
import { taskUser } from "./task-dir.ts";
import type { PrestartRequest, PrestartResponse, TaskHook, TaskHookContext } from "./hook.ts";

/** The signed identity `spec` (the default one without) of a task of an allocation, or undefined where none can be made. */
export type SignIdentity = (allocId: string, task: string, spec?: IdentitySpec) => string | undefined;

export const IDENTITY_FILE = "nomad_token";
export const IDENTITY_ENV = "NOMAD_TOKEN";
const IDENTITY_FILE_MODE = 0o600;
/** A token is renewed once this share of its life is gone (Nomad renews well before expiry too). */
const RENEW_AT_LIFE_SHARE = 0.5;
/** No renewal sooner than this after the last, whatever the ttl: a tiny ttl must not spin. */
const MIN_RENEW_MS = 1_000;

/** Nomad's file of a named identity, in secrets/. */
export const namedIdentityFile = (name: string) => `nomad_${name}.jwt`;
/** Nomad's variable of a named identity. */
export const namedIdentityEnv = (name: string) => `${IDENTITY_ENV}_${name}`;

const handedOver = (identity: WorkloadIdentity) => identity.Env || identity.File;
const namedIdentities = (ctx: TaskHookContext) => (ctx.task.Identities ?? []).filter((identity) => identity.Name !== DEFAULT_IDENTITY && handedOver(identity));

/**
 * A class, its methods on the prototype, and its renewals' map made only for a
 * task with an identity to renew: one lives per running task (issue 35: the
 * agent's memory per task).
 */
class IdentityHook implements TaskHook {
  readonly name = "identity";
  private renewals: Map<string, ReturnType<typeof setTimeout>> | undefined;

  constructor(private readonly sign: SignIdentity) {}

  async prestart(req: PrestartRequest): Promise<PrestartResponse> {
    const env: Record<string, string> = {};
    const user = taskUser(req.task);
    const wanted = req.task.Identity;
    if (wanted && handedOver(wanted)) {
      const token = this.signed(req);
      if (wanted.File) writeToken(req.taskDir.secrets, IDENTITY_FILE, token, user);
      if (wanted.Env) env[IDENTITY_ENV] = token;
    }
    for (const identity of namedIdentities(req)) {
      const token = this.signed(req, identity);
      if (identity.File) writeToken(req.taskDir.secrets, namedIdentityFile(identity.Name), token, user);
      if (identity.Env) env[namedIdentityEnv(identity.Name)] = token;
    }
    return { env };
  }

  async poststart(req: TaskHookContext): Promise<void> {
    this.stopRenewing();
    for (const identity of namedIdentities(req)) if (identity.TTL > 0) this.renewLater(req, identity);
  }

  async exited(): Promise<void> {
    this.stopRenewing();
  }

  async stop(): Promise<void> {
    this.stopRenewing();
  }

  async shutdown(): Promise<void> {
    this.stopRenewing();
  }

  private stopRenewing(): void {
    if (!this.renewals) return;
    for (const timer of this.renewals.values()) clearTimeout(timer);
    this.renewals.clear();
  }

  private signed(ctx: TaskHookContext, spec?: WorkloadIdentity): string {
    const token = this.sign(ctx.alloc.ID, ctx.task.Name, spec);
    if (token === undefined) throw new Error(`no workload identity${spec ? ` "${spec.Name}"` : ""} for task "${ctx.task.Name}": the server cannot sign one`);
    return token;
  }

  private renewLater(ctx: TaskHookContext, identity: WorkloadIdentity): void {
    const lifeMs = identity.TTL / NS_PER_MS;
    this.schedule(ctx, identity, Math.max(MIN_RENEW_MS, lifeMs * RENEW_AT_LIFE_SHARE));
  }

  // A renewal that fails (no signer, a full secrets dir) says so on the task and is tried again:
  // the task keeps its current token until that runs out.
  private schedule(ctx: TaskHookContext, identity: WorkloadIdentity, delayMs: number): void {
    const timer = setTimeout(() => {
      this.renewals?.delete(identity.Name);
      this.renew(ctx, identity).catch((err: unknown) => {
        if (ctx.killed.aborted) return;
        const why = err instanceof Error ? err.message : String(err);
        ctx.emitEvent(taskEvent(TASK_EVENT.HookFailed, { Message: `identity: renewing "${identity.Name}" failed: ${why}; trying again` }));
        this.schedule(ctx, identity, MIN_RENEW_MS);
      });
    }, delayMs);
    (this.renewals ??= new Map()).set(identity.Name, timer);
  }

  private async renew(ctx: TaskHookContext, identity: WorkloadIdentity): Promise<void> {
    if (ctx.killed.aborted) return;
    const token = this.signed(ctx, identity);
    if (identity.File) writeToken(ctx.taskDir.secrets, namedIdentityFile(identity.Name), token, taskUser(ctx.task));
    if (identity.ChangeMode === "restart") {
      this.stopRenewing();
      await ctx.restartTask(`Identity[${identity.Name}]: new token acquired`, false);
      return;
    }
    if (identity.ChangeMode === "signal") await ctx.signalTask(identity.ChangeSignal, `Identity[${identity.Name}]: new Identity token acquired`);
    this.renewLater(ctx, identity);
  }
}

export function identityHook(sign: SignIdentity): TaskHook {
  return new IdentityHook(sign);
}

/** Writes the token through a descriptor of secrets/, never following a link the task put there. */
function writeToken(secrets: string, name: string, token: string, user: string | undefined): void {
  const dir = openSync(secrets, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const path = `/proc/self/fd/${dir}/${name}`;
    rmSync(path, { force: true });
    const file = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, IDENTITY_FILE_MODE);
    try {
      writeSync(file, token);
      const owner = user === undefined ? fstatSync(dir) : lookupUser(user);
      if (owner) fchownSync(file, owner.uid, owner.gid);
    } finally {
      closeSync(file);
    }
  } finally {
    closeSync(dir);
  }
}
