/**
 * Nomad's job diff (api.JobDiff): what changed between two versions of a
 * job, field by field. The server computes it (server/job-diff.ts) for
 * plans and job versions; the CLI prints it.
 */
export type DiffType = "Added" | "Deleted" | "Edited" | "None";

export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface ObjectDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

export interface TaskDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Annotations: string[] | null;
}

export interface TaskGroupDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Tasks: TaskDiff[] | null;
  /** Set by a plan: how many allocs each kind of update touches ("create", "destroy", "in-place update", ...). */
  Updates: Record<string, number> | null;
}

export interface JobDiff {
  Type: DiffType;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}
