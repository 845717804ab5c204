/**
 * What changed between two versions of a job, in Nomad's JobDiff shape
 * (`job plan`, `job history -p`): the job, its groups by name and their
 * tasks by name, each with its changed fields and its changed objects.
 *
 * The rules follow Nomad's diff: a job's, group's or task's own primitive
 * fields (and its string maps, flattened as `Meta[key]`) are listed only
 * when they changed, all of them when the whole thing was added or removed;
 * a nested object (a task's Config, a group's RestartPolicy) is listed when
 * it changed, with all its flattened fields for context; a list of strings
 * (Datacenters) is diffed as a set.
 */
import type { Job } from "../structs/job.ts";

import type { DiffType, FieldDiff, JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from "../structs/job-diff.ts";

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type Record_ = { [key: string]: Json };

/** Job fields that change on every version, or are diffed on their own (Nomad's filter list). */
const JOB_SKIP = new Set(["ID", "Status", "StatusDescription", "Version", "Stable", "CreateIndex", "ModifyIndex", "JobModifyIndex", "Update", "SubmitTime", "NomadTokenID", "TaskGroups"]);
const GROUP_SKIP = new Set(["Name", "Tasks"]);
const TASK_SKIP = new Set(["Name"]);

const isPrimitive = (value: Json | undefined): value is string | number | boolean => ["string", "number", "boolean"].includes(typeof value);
const isRecord = (value: Json | undefined): value is Record_ => typeof value === "object" && value !== null && !Array.isArray(value);
const isStringMap = (value: Json | undefined): value is Record_ => isRecord(value) && Object.values(value).every(isPrimitive);

/** Go's rendering of a primitive in a diff. */
const text = (value: string | number | boolean): string => String(value);

/** Every leaf under `value`, named as Nomad's flatmap names them: `a.b`, `args[0]`, `Meta[key]`. */
function flatten(value: Json | undefined, prefix: string, out: Map<string, string>): Map<string, string> {
  if (value === undefined || value === null) return out;
  if (isPrimitive(value)) out.set(prefix, text(value));
  else if (Array.isArray(value)) value.forEach((item, i) => flatten(item, `${prefix}[${i}]`, out));
  else {
    const map = isStringMap(value);
    for (const [key, item] of Object.entries(value)) flatten(item, !prefix ? key : map ? `${prefix}[${key}]` : `${prefix}.${key}`, out);
  }
  return out;
}

function fieldDiff(name: string, old: string, now: string, contextual: boolean): FieldDiff | undefined {
  if (old === now) return contextual ? { Type: "None", Name: name, Old: old, New: now, Annotations: null } : undefined;
  const type: DiffType = old === "" ? "Added" : now === "" ? "Deleted" : "Edited";
  return { Type: type, Name: name, Old: old, New: now, Annotations: null };
}

function fieldDiffs(old: Map<string, string>, now: Map<string, string>, contextual: boolean): FieldDiff[] {
  const out: FieldDiff[] = [];
  for (const name of [...new Set([...old.keys(), ...now.keys()])].sort()) {
    const diff = fieldDiff(name, old.get(name) ?? "", now.get(name) ?? "", contextual);
    if (diff) out.push(diff);
  }
  return out;
}

const changed = (items: readonly { Type: DiffType }[] | null) => (items ?? []).some((item) => item.Type !== "None");
const orNull = <T>(items: T[]): T[] | null => (items.length > 0 ? items : null);

function containerType(old: unknown, now: unknown, ...children: (readonly { Type: DiffType }[] | null)[]): DiffType {
  if (old === undefined) return "Added";
  if (now === undefined) return "Deleted";
  return children.some(changed) ? "Edited" : "None";
}

/** A nested object (or one element of a list of objects), listed with all its fields when it changed. */
function objectDiff(name: string, old: Json | undefined, now: Json | undefined): ObjectDiff | undefined {
  if (JSON.stringify(old ?? null) === JSON.stringify(now ?? null)) return undefined;
  const fields = fieldDiffs(flatten(old, "", new Map()), flatten(now, "", new Map()), true);
  return { Type: old === undefined || old === null ? "Added" : now === undefined || now === null ? "Deleted" : "Edited", Name: name, Fields: orNull(fields), Objects: null };
}

/** A list of strings as a set: each value added, removed, or (for context) kept. */
function stringSetDiff(name: string, old: readonly Json[], now: readonly Json[]): ObjectDiff | undefined {
  const before = new Set(old.map(String));
  const after = new Set(now.map(String));
  const fields: FieldDiff[] = [...new Set([...before, ...after])].sort().map((value) => {
    if (!before.has(value)) return { Type: "Added", Name: name, Old: "", New: value, Annotations: null };
    if (!after.has(value)) return { Type: "Deleted", Name: name, Old: value, New: "", Annotations: null };
    return { Type: "None", Name: name, Old: value, New: value, Annotations: null };
  });
  if (!changed(fields)) return undefined;
  const type: DiffType = before.size === 0 ? "Added" : after.size === 0 ? "Deleted" : "Edited";
  return { Type: type, Name: name, Fields: fields, Objects: null };
}

/** The fields and objects of a job, group or task: its own primitives and string maps as fields, the rest as objects. */
function entityParts(old: Record_ | undefined, now: Record_ | undefined, skip: ReadonlySet<string>): { fields: FieldDiff[]; objects: ObjectDiff[] } {
  const oldFlat = new Map<string, string>();
  const newFlat = new Map<string, string>();
  const objects: ObjectDiff[] = [];
  const keys = [...new Set([...Object.keys(old ?? {}), ...Object.keys(now ?? {})])].sort();
  for (const key of keys) {
    if (skip.has(key)) continue;
    const before = old?.[key];
    const after = now?.[key];
    if (isPrimitive(before) || isPrimitive(after) || isStringMap(before) || isStringMap(after)) {
      if (isPrimitive(before)) oldFlat.set(key, text(before));
      else if (isStringMap(before)) for (const [name, value] of Object.entries(before)) oldFlat.set(`${key}[${name}]`, text(value as string));
      if (isPrimitive(after)) newFlat.set(key, text(after));
      else if (isStringMap(after)) for (const [name, value] of Object.entries(after)) newFlat.set(`${key}[${name}]`, text(value as string));
      continue;
    }
    const beforeList = Array.isArray(before) ? before : undefined;
    const afterList = Array.isArray(after) ? after : undefined;
    if (beforeList || afterList) {
      const all = [...(beforeList ?? []), ...(afterList ?? [])];
      if (all.every(isPrimitive)) {
        const diff = stringSetDiff(key, beforeList ?? [], afterList ?? []);
        if (diff) objects.push(diff);
        continue;
      }
      const length = Math.max(beforeList?.length ?? 0, afterList?.length ?? 0);
      for (let i = 0; i < length; i++) {
        const diff = objectDiff(key, beforeList?.[i], afterList?.[i]);
        if (diff) objects.push(diff);
      }
      continue;
    }
    const diff = objectDiff(key, before, after);
    if (diff) objects.push(diff);
  }
  // Only what changed: for an added or removed whole, that is every field it has.
  return { fields: fieldDiffs(oldFlat, newFlat, false), objects };
}

function byName(items: readonly Json[] | undefined): Map<string, Record_> {
  const out = new Map<string, Record_>();
  for (const item of items ?? []) if (isRecord(item)) out.set(String(item.Name), item);
  return out;
}

function taskDiff(name: string, old: Record_ | undefined, now: Record_ | undefined): TaskDiff {
  const { fields, objects } = entityParts(old, now, TASK_SKIP);
  return { Type: containerType(old, now, fields, objects), Name: name, Fields: orNull(fields), Objects: orNull(objects), Annotations: null };
}

function groupDiff(name: string, old: Record_ | undefined, now: Record_ | undefined): TaskGroupDiff {
  const { fields, objects } = entityParts(old, now, GROUP_SKIP);
  const oldTasks = byName(old?.Tasks as Json[] | undefined);
  const newTasks = byName(now?.Tasks as Json[] | undefined);
  const tasks = [...new Set([...oldTasks.keys(), ...newTasks.keys()])].sort().map((task) => taskDiff(task, oldTasks.get(task), newTasks.get(task)));
  return { Type: containerType(old, now, fields, objects, tasks), Name: name, Fields: orNull(fields), Objects: orNull(objects), Tasks: orNull(tasks), Updates: null };
}

/** The diff from `old` (undefined: the job is new) to `now`. */
export function diffJobs(old: Job | undefined, now: Job): JobDiff {
  const before = old as unknown as Record_ | undefined;
  const after = now as unknown as Record_;
  const { fields, objects } = entityParts(before, after, JOB_SKIP);
  const oldGroups = byName(before?.TaskGroups as Json[] | undefined);
  const newGroups = byName(after.TaskGroups as Json[]);
  const groups = [...new Set([...oldGroups.keys(), ...newGroups.keys()])].sort().map((group) => groupDiff(group, oldGroups.get(group), newGroups.get(group)));
  return { Type: containerType(before, after, fields, objects, groups), ID: now.ID, Fields: orNull(fields), Objects: orNull(objects), TaskGroups: orNull(groups) };
}
