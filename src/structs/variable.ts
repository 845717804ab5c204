/**
 * Nomad 1.x's Variables: shapes and rules (nomad/structs/variables.go).
 *
 *   VariableMetadata   what a list answers: Namespace, Path, the indexes and
 *                      times (nanoseconds) of creation and last change
 *   Variable           the metadata with its Items (string -> string)
 *
 * A path is 1-128 of [a-zA-Z0-9-_~/]; under the reserved top-level "nomad"
 * only nomad/jobs[/...] and nomad/job-templates/<name> may be written. The
 * items together (every key and value, in UTF-8 bytes) are at most 64 KiB.
 */
import * as v from "valibot";

export interface VariableMetadata {
  Namespace: string;
  Path: string;
  CreateIndex: number;
  /** Nanoseconds since the epoch. */
  CreateTime: number;
  ModifyIndex: number;
  ModifyTime: number;
}

export type VariableItems = Record<string, string>;

export interface Variable extends VariableMetadata {
  /** null only in a conflict answer the caller may not read, or for a variable that does not exist. */
  Items: VariableItems | null;
}

/** Nomad's limit on a variable's items, not configurable (maxVariableSize). */
export const MAX_VARIABLE_BYTES = 64 * 1024;

const VARIABLE_PATH = /^[a-zA-Z0-9\-_~/]{1,128}$/;

/** The namespace that lists every namespace (?namespace=*); never one a variable lives in. */
export const ALL_NAMESPACES = "*";

/** PUT /v1/var/:path's body: the path comes from the URL; Namespace may name the request's namespace. */
export const VariableUpsertSchema = v.object({
  Namespace: v.optional(v.string(), ""),
  Items: v.optional(v.nullable(v.record(v.string(), v.string("expected a string value"))), null),
});

const utf8 = new TextEncoder();

/** The items' size as Nomad counts it: the bytes of every key and value. */
export function itemsSize(items: VariableItems): number {
  let bytes = 0;
  for (const [key, value] of Object.entries(items)) bytes += utf8.encode(key).length + utf8.encode(value).length;
  return bytes;
}

/** What is wrong with a variable path, in Nomad's words, or undefined. */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return "variable requires path";
  if (!VARIABLE_PATH.test(path)) return `invalid path "${path}"`;
  const parts = path.split("/");
  if (parts[0] !== "nomad") return undefined;
  if (parts.length === 1) return '"nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below';
  if (parts[1] === "jobs") return undefined;
  if (parts[1] === "job-templates") {
    return parts.length === 3
      ? undefined
      : '"nomad/job-templates" is a reserved directory path, but you may write variables at the level below it, for example, "nomad/job-templates/template-name"';
  }
  return 'only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory';
}

/** What is wrong with a variable to write, in Nomad's words (Validate), or undefined. */
export function variableProblem(namespace: string, path: string, items: VariableItems): string | undefined {
  if (namespace === ALL_NAMESPACES) return 'can not target wildcard ("*")namespace';
  if (Object.keys(items).length === 0) return "empty variables are invalid";
  if (itemsSize(items) > MAX_VARIABLE_BYTES) return "variables are limited to 64KiB in total size";
  return pathProblem(path);
}
