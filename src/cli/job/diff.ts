/**
 * A job diff as Nomad's `job plan` and `job history -p` print it: `+`, `-`
 * and `+/-` markers, fields aligned within their block, objects in braces,
 * a task group's update counts in parentheses. The shapes are those of
 * Nomad's api.JobDiff, which the agent's plan and versions answers carry.
 */
import type { DiffType, FieldDiff, JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from "../../structs/job-diff.ts";

const MARKERS: Record<DiffType, string> = { Added: "+ ", Deleted: "- ", Edited: "+/- ", None: "" };
const spaces = (count: number) => " ".repeat(Math.max(0, count));
const quote = (text: string) => JSON.stringify(text);

function longestPrefixes(fields: readonly FieldDiff[], objects: readonly ObjectDiff[]): { field: number; marker: number } {
  let field = 0;
  let marker = 0;
  for (const diff of fields) {
    field = Math.max(field, diff.Name.length);
    marker = Math.max(marker, MARKERS[diff.Type].length);
  }
  for (const diff of objects) marker = Math.max(marker, MARKERS[diff.Type].length);
  return { field, marker };
}

function formatField(diff: FieldDiff, start: number, keyPrefix: number, valuePrefix: number): string {
  let out = `${spaces(start)}${MARKERS[diff.Type]}${spaces(keyPrefix)}${diff.Name}: ${spaces(valuePrefix)}`;
  if (diff.Type === "Deleted") out += quote(diff.Old);
  else if (diff.Type === "Edited") out += `${quote(diff.Old)} => ${quote(diff.New)}`;
  else out += quote(diff.New);
  if (diff.Annotations?.length) out += ` (${diff.Annotations.join(", ")})`;
  return out;
}

function formatObject(diff: ObjectDiff, start: number, keyPrefix: number): string {
  const marker = MARKERS[diff.Type];
  const { field, marker: longestMarker } = longestPrefixes(diff.Fields ?? [], diff.Objects ?? []);
  const out = `${spaces(start)}${marker}${spaces(keyPrefix)}${diff.Name} {\n${aligned(diff.Fields ?? [], diff.Objects ?? [], start + keyPrefix + 2, field, longestMarker)}`;
  return `${out}\n${spaces(start + marker.length + keyPrefix)}}`;
}

function aligned(fields: readonly FieldDiff[], objects: readonly ObjectDiff[], start: number, longestField: number, longestMarker: number): string {
  const lines = [
    ...fields.map((diff) => formatField(diff, start, longestMarker - MARKERS[diff.Type].length, longestField - diff.Name.length)),
    ...objects.map((diff) => formatObject(diff, start, longestMarker - MARKERS[diff.Type].length)),
  ];
  return lines.join("\n");
}

function formatTask(task: TaskDiff, start: number, taskPrefix: number, verbose: boolean): string {
  let out = `${spaces(start)}${MARKERS[task.Type]}${spaces(taskPrefix)}Task: ${quote(task.Name)}`;
  if (task.Annotations?.length) out += ` (${task.Annotations.join(", ")})`;
  if (task.Type === "None" || ((task.Type === "Deleted" || task.Type === "Added") && !verbose)) return out;
  const { field, marker } = longestPrefixes(task.Fields ?? [], task.Objects ?? []);
  return `${out}\n${aligned(task.Fields ?? [], task.Objects ?? [], start + 2, field, marker)}`;
}

function formatGroup(group: TaskGroupDiff, groupPrefix: number, verbose: boolean): string {
  let out = `${MARKERS[group.Type]}${spaces(groupPrefix)}Task Group: ${quote(group.Name)}`;
  const updates = Object.entries(group.Updates ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  out += updates.length > 0 ? ` (${updates.map(([kind, count]) => `${count} ${kind}`).join(", ")})\n` : "\n";
  const tasks = group.Tasks ?? [];
  const prefixes = longestPrefixes(group.Fields ?? [], group.Objects ?? []);
  const longestMarker = Math.max(prefixes.marker, ...tasks.map((task) => MARKERS[task.Type].length));
  const start = groupPrefix + 2;
  if (group.Type === "Edited" || verbose) {
    const block = aligned(group.Fields ?? [], group.Objects ?? [], start, prefixes.field, longestMarker);
    if (block) out += `${block}\n`;
  }
  for (const task of tasks) out += `${formatTask(task, start, longestMarker - MARKERS[task.Type].length, verbose)}\n`;
  return out;
}

/** The whole diff, trimmed, as Nomad prints it above the dry-run. */
export function formatJobDiff(job: JobDiff, verbose: boolean): string {
  let out = `${MARKERS[job.Type]}Job: ${quote(job.ID)}\n`;
  const groups = job.TaskGroups ?? [];
  const prefixes = longestPrefixes(job.Fields ?? [], job.Objects ?? []);
  const longestMarker = Math.max(prefixes.marker, ...groups.map((group) => MARKERS[group.Type].length));
  if (job.Type === "Edited" || verbose) {
    const block = aligned(job.Fields ?? [], job.Objects ?? [], 0, prefixes.field, longestMarker);
    if (block) out += `${block}\n`;
  }
  for (const group of groups) out += `${formatGroup(group, longestMarker - MARKERS[group.Type].length, verbose)}\n`;
  return out.trim();
}
