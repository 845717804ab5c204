/**
 * The line and column of each problem in a job file. Every problem starts
 * with its field path (`job.group["web"].task["srv"].resources.memory: ...`
 * for HCL, `Job.TaskGroups["web"].Tasks["srv"].Resources.MemoryMB: ...` for
 * JSON; src/jobspec/paths.ts renders them), and that path is looked up in the
 * file's text: HCL's outline through src/lib/hcl-positions.ts, JSON's tree
 * through jsonc-parser. A field the file does not have (a missing one) is
 * placed at the block that lacks it; a problem with no path, at the top.
 */
import { getNodeValue, parseTree, type Node, type ParseError } from "jsonc-parser";
import { locateInHcl, type HclStep } from "../lib/hcl-positions.ts";
import { positionAt, type SourcePosition } from "../lib/validation.ts";

export type JobFormat = "hcl" | "json";

const FILE_START: SourcePosition = { line: 1, column: 1 };

/** A path's segments: names, `["label"]`s and `[n]`s, up to the ": " before the message. */
const PATH = /^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*|\["(?:[^"\\]|\\.)*"\]|\[\d+\])*(?=: )/;
const SEGMENT = /\.?([A-Za-z_][\w-]*)|\["((?:[^"\\]|\\.)*)"\]|\[(\d+)\]/g;

type Segment = { name: string } | { label: string } | { index: number };

/** A label as a path quotes it; one holding a raw control character (which JSON refuses) is taken as written. */
function unquote(quoted: string): string {
  try {
    return JSON.parse(`"${quoted}"`) as string;
  } catch {
    return quoted;
  }
}

function segments(problem: string): Segment[] {
  const path = PATH.exec(problem)?.[0];
  if (path === undefined) return [];
  return [...path.matchAll(SEGMENT)].map((match): Segment => {
    if (match[1] !== undefined) return { name: match[1] };
    if (match[2] !== undefined) return { label: unquote(match[2]) };
    return { index: Number(match[3]) };
  });
}

/** `group["web"]` is a block named group labelled web; `resources[1]` the second resources block. */
function hclSteps(path: readonly Segment[]): HclStep[] {
  const steps: HclStep[] = [];
  for (const segment of path) {
    const last = steps.at(-1);
    if ("name" in segment) steps.push({ name: segment.name, labels: [] });
    else if (last && "label" in segment) last.labels = [...(last.labels ?? []), segment.label];
    else if (last && "index" in segment) last.index = segment.index;
  }
  return steps;
}

function property(node: Node | undefined, key: string): Node | undefined {
  if (node?.type !== "object") return undefined;
  return node.children?.find((pair) => pair.children?.[0]?.value === key);
}

/** The array item named `label` (its Name or Label, as paths.ts renders items). */
function labelledItem(node: Node | undefined, label: string): Node | undefined {
  if (node?.type !== "array") return undefined;
  return node.children?.find((item) => {
    const value = getNodeValue(item) as { Name?: unknown; Label?: unknown } | null;
    return typeof value === "object" && value !== null && (value.Name === label || value.Label === label);
  });
}

function locateInJson(text: string, path: readonly Segment[]): SourcePosition | undefined {
  const root = parseTree(text);
  if (!root) return undefined;
  // The job is the document, or its "Job" when wrapped as {"Job": {...}}.
  const wrapped = property(root, "Job");
  let node: Node | undefined = wrapped?.children?.[1] ?? root;
  let found: Node | undefined = wrapped ?? root;
  for (const segment of path.slice(1)) {
    let next: Node | undefined;
    if ("name" in segment) {
      const pair = property(node, segment.name);
      if (pair) found = pair;
      next = pair?.children?.[1];
    } else {
      next = "label" in segment ? labelledItem(node, segment.label) : node?.children?.[segment.index];
      if (next) found = next;
    }
    if (!next) break;
    node = next;
  }
  return positionAt(text, found.offset);
}

/** Each problem's place in `text`, in the order of `problems`. */
export function locateProblems(text: string, format: JobFormat, problems: readonly string[]): SourcePosition[] {
  return problems.map((problem) => {
    const path = segments(problem);
    if (path.length === 0) return FILE_START;
    const at = format === "hcl" ? locateInHcl(text, hclSteps(path)) : locateInJson(text, path);
    return at ?? FILE_START;
  });
}

/** Where JSON text first stops being JSON. */
export function jsonSyntaxPosition(text: string): SourcePosition {
  const errors: ParseError[] = [];
  parseTree(text, errors);
  return errors[0] ? positionAt(text, errors[0].offset) : FILE_START;
}
