/**
 * Nomad's WorkloadIdentity.Validate (1.7+) for a task's identities, and the
 * uniqueness of their names and of the task's action names: checked on
 * register, whether or not drover issues the token (it refuses env/file
 * tokens at task start).
 */
import { DEFAULT_IDENTITY, type Task, type WorkloadIdentity } from "../structs/job.ts";
import type { PathSegment } from "./paths.ts";
import type { Problem } from "./validate.ts";

/** Nomad's validIdentityName. */
const IDENTITY_NAME = /^[a-zA-Z0-9_-]{1,128}$/;
const QUIET_CHANGE_MODES = ["", "noop", "restart"];

function identityProblems(identity: WorkloadIdentity, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  const at = (field: string, message: string) => problems.push({ path: [...path, field], message });
  const name = identity.Name === "" ? DEFAULT_IDENTITY : identity.Name;
  if (!IDENTITY_NAME.test(name)) at("Name", `invalid name "${identity.Name}" (letters, digits, dashes and underscores, at most 128)`);
  identity.Audience.forEach((audience, i) => {
    if (audience === "") problems.push({ path: [...path, "Audience", i], message: "an empty string is an invalid audience" });
  });
  if (QUIET_CHANGE_MODES.includes(identity.ChangeMode)) {
    if (identity.ChangeSignal !== "") at("ChangeSignal", `can only use change_signal with change_mode "signal" (got change_signal "${identity.ChangeSignal}")`);
  } else if (identity.ChangeMode === "signal") {
    if (identity.ChangeSignal === "") at("ChangeSignal", 'change_signal must be specified when using change_mode "signal"');
  } else at("ChangeMode", `invalid change_mode "${identity.ChangeMode}" (use noop, restart or signal)`);
  if (identity.TTL > 0 && name === DEFAULT_IDENTITY) at("TTL", "ttl for the default identity is not supported");
  if (identity.Filepath !== "" && !identity.File) at("Filepath", "file must be true to set filepath");
  return problems;
}

/** `task`'s identities and actions, at `path` (the task's). */
export function taskIdentityProblems(task: Task, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  if (task.Identity) problems.push(...identityProblems(task.Identity, [...path, "Identity"]));
  const named = task.Identities ?? [];
  named.forEach((identity, i) => problems.push(...identityProblems(identity, [...path, "Identities", i])));
  const seen = new Set<string>(task.Identity ? [DEFAULT_IDENTITY] : []);
  named.forEach((identity, i) => {
    if (seen.has(identity.Name)) problems.push({ path: [...path, "Identities", i, "Name"], message: `identity "${identity.Name}" is defined more than once` });
    seen.add(identity.Name);
  });
  const actions = new Set<string>();
  (task.Actions ?? []).forEach((action, i) => {
    if (actions.has(action.Name)) problems.push({ path: [...path, "Actions", i, "Name"], message: `action "${action.Name}" is defined more than once` });
    actions.add(action.Name);
  });
  return problems;
}
