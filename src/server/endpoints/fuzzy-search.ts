/**
 * Nomad 1.x's fuzzy search (Search.FuzzySearch, `POST /v1/search/fuzzy`):
 * names that contain the text, case-insensitively, per context.
 *
 *   jobs ──> the job's name (jobs), its groups, tasks, services, and each
 *            task's command (exec, raw_exec), image (docker), class (java)
 *   nodes, allocs, namespaces, vars ──> the name (a variable's path)
 *   evals, deployment, scaling_policy ──> IDs by the request's ?prefix=, as
 *            Nomad's fuzzy search answers these UUID-named contexts
 *
 * Matches sort by where the text sits in the name, then the shorter name,
 * then the name. As Nomad's defaults: a text of at least 2 characters; each
 * context looks at its first 20 objects (a truncation is flagged when there
 * are more) and answers at most 100 matches.
 */
import type { Job } from "../../structs/job.ts";
import type { Listed } from "../state/persist.ts";
import type { VariableMetadata } from "../../structs/variable.ts";
import { invalid } from "../errors.ts";
import type { TableName } from "../state/store.ts";
import type { EndpointContext } from "./context.ts";
import type { ScalingPolicyEndpoint } from "./scaling-policies.ts";

/** Nomad's search.min_term_length default. */
export const MIN_TERM_LENGTH = 2;
/** Nomad's search.limit_query default: objects looked at per context. */
export const LIMIT_QUERY = 20;
/** Nomad's search.limit_results default: matches answered per context. */
export const LIMIT_RESULTS = 100;

/** The contexts a fuzzy search may name (Nomad's OSS contexts drover has), in Nomad's order. */
export const FUZZY_CONTEXTS = ["allocs", "deployment", "evals", "jobs", "nodes", "namespaces", "scaling_policy", "plugins", "vars"] as const;
export type FuzzyContext = (typeof FUZZY_CONTEXTS)[number];

/** The contexts a job's parts answer in, besides "jobs". */
type JobPartContext = "groups" | "services" | "tasks" | "images" | "commands" | "classes";
export type MatchContext = FuzzyContext | JobPartContext;

export interface FuzzyMatch {
  ID: string;
  /** The IDs of its parents (namespace, job, group, task); absent where there are none. */
  Scope?: string[];
}

export interface FuzzySearchResponse {
  Matches: Partial<Record<MatchContext, FuzzyMatch[]>>;
  Truncations: Partial<Record<MatchContext, boolean>>;
}

/** The table whose index a fuzzy search of each context reports. */
export const FUZZY_TABLES: Readonly<Record<FuzzyContext, TableName | "variables">> = {
  allocs: "allocs",
  deployment: "deployments",
  evals: "evals",
  jobs: "jobs",
  nodes: "nodes",
  namespaces: "jobs",
  scaling_policy: "jobs",
  plugins: "nodes",
  vars: "variables",
};

/** Contexts named by UUID: searched by ID prefix, as Nomad's fuzzy search does. */
const PREFIX_CONTEXTS: ReadonlySet<FuzzyContext> = new Set(["evals", "deployment", "scaling_policy"]);

interface Scored extends FuzzyMatch {
  score: number;
}

const byScore = (a: Scored, b: Scored) => a.score - b.score || a.ID.length - b.ID.length || (a.ID < b.ID ? -1 : a.ID > b.ID ? 1 : 0);

export interface FuzzyRequest {
  text: string;
  /** The contexts to search (already narrowed to what the caller may read). */
  contexts: readonly FuzzyContext[];
  /** ?prefix=: what the UUID-named contexts match. */
  prefix: string;
  /** The variables the caller may list, for "vars". */
  variables: readonly VariableMetadata[];
  /**
   * Whether an object of `context` in `namespace` is shown: in the request's
   * namespace (any with `*`) and readable there; for "namespaces", whether
   * the caller may see that namespace.
   */
  visible(context: FuzzyContext, namespace: string): boolean;
}

export class FuzzySearchEndpoint {
  constructor(
    private readonly ctx: EndpointContext,
    private readonly scalingPolicies: ScalingPolicyEndpoint,
  ) {}

  /** The contexts `context` names ("all": every one); an unknown one is a user error in Nomad's words. */
  contexts(context: string): FuzzyContext[] {
    if (context === "all") return [...FUZZY_CONTEXTS];
    if ((FUZZY_CONTEXTS as readonly string[]).includes(context)) return [context as FuzzyContext];
    throw invalid(`context must be one of [${FUZZY_CONTEXTS.join(" ")}] or 'all' for all contexts; got "${context}"`);
  }

  search(request: FuzzyRequest): FuzzySearchResponse {
    if (request.text.length < MIN_TERM_LENGTH) throw invalid(`fuzzy search query must be at least ${MIN_TERM_LENGTH} characters, got ${request.text.length}`);
    const text = request.text.toLowerCase();
    const response: FuzzySearchResponse = { Matches: {}, Truncations: {} };
    for (const context of request.contexts) {
      if (PREFIX_CONTEXTS.has(context)) {
        const ids = this.idsByPrefix(context, request.prefix, (namespace) => request.visible(context, namespace));
        response.Matches[context] = ids.slice(0, LIMIT_QUERY).map((ID) => ({ ID }));
        response.Truncations[context] = ids.length > LIMIT_QUERY;
        continue;
      }
      response.Truncations[context] = false;
      const objects = this.objects(context, request.variables, (namespace) => request.visible(context, namespace));
      const found = new Map<MatchContext, Scored[]>();
      for (const object of objects.slice(0, LIMIT_QUERY)) {
        for (const [matchContext, match] of object(text)) {
          const list = found.get(matchContext) ?? [];
          if (list.length < LIMIT_RESULTS) list.push(match);
          else response.Truncations[matchContext] = true;
          found.set(matchContext, list);
        }
      }
      if (objects.length > LIMIT_QUERY) for (const matchContext of found.keys()) response.Truncations[matchContext] = true;
      for (const [matchContext, list] of found) response.Matches[matchContext] = list.sort(byScore).map(({ ID, Scope }) => (Scope ? { ID, Scope } : { ID }));
    }
    return response;
  }

  /** All the IDs with `prefix` (the prefix search truncates; the caller does). */
  private idsByPrefix(context: FuzzyContext, prefix: string, shown: (namespace: string) => boolean): string[] {
    const { read } = this.ctx.store;
    const ids =
      context === "scaling_policy"
        ? this.scalingPolicies.list({ job: "", type: "", inNamespace: shown }).map((policy) => policy.ID)
        : [...(context === "evals" ? read.evals.listed((evaluation) => evaluation, () => this.ctx.store.coldLists.evalIds(prefix)) : read.deployments.values())].flatMap((item) =>
            shown(item.Namespace) ? [item.ID] : [],
          );
    return ids.filter((id) => id.startsWith(prefix)).sort();
  }

  /** Each object of the context, in ID order, as a matcher of the text. */
  private objects(context: FuzzyContext, variables: readonly VariableMetadata[], shown: (namespace: string) => boolean): ((text: string) => [MatchContext, Scored][])[] {
    const { store } = this.ctx;
    const { read } = store;
    const sorted = <T extends { ID: string }>(items: Iterable<T>) => [...items].sort((a, b) => (a.ID < b.ID ? -1 : 1));
    const inShown = <T extends { Namespace: string }>(items: Iterable<T>) => [...items].filter((item) => shown(item.Namespace));
    // Only the first LIMIT_QUERY objects are matched: a finished one (only in SQLite) is read only when it is one of them.
    const lazy = <V>(table: { get(id: string): V | undefined }) => ({ ID, Namespace }: Listed) => ({ ID, Namespace, read: () => table.get(ID)! });
    const inMemory = <V extends Listed>(value: V) => ({ ID: value.ID, Namespace: value.Namespace, read: () => value });
    switch (context) {
      case "jobs": {
        const cold = [...store.coldJobs.listed()].map(lazy(read.jobs));
        return sorted(inShown([...[...read.jobs.hotValues()].map(inMemory), ...cold])).map((job) => (text) => jobMatches(job.read(), text));
      }
      case "nodes":
        return sorted(read.nodes.values()).map((node) => (text) => single("nodes", node.Name, text, [node.ID]));
      case "allocs":
        return sorted(inShown(read.allocs.listed(inMemory, () => [...store.coldLists.allocIds("")].map(([id, listed]) => [id, () => lazy(read.allocs)(listed())])))).map(
          (item) => (text) => single("allocs", item.read().Name, text, [item.Namespace, item.ID]),
        );
      case "namespaces":
        return [...read.namespaces.keys()]
          .filter(shown)
          .sort()
          .map((name) => (text) => single("namespaces", name, text));
      case "vars":
        return variables.map((variable) => (text) => single("vars", variable.Path, text, [variable.Namespace, variable.Path]));
      default:
        // CSI plugins: drover has none.
        return [];
    }
  }
}

function scored(name: string, text: string, scope?: string[]): Scored | undefined {
  const at = name.toLowerCase().indexOf(text);
  if (at < 0) return undefined;
  return { ID: name, score: at, ...(scope ? { Scope: scope } : {}) };
}

function single(context: MatchContext, name: string, text: string, scope?: string[]): [MatchContext, Scored][] {
  const match = scored(name, text, scope);
  return match ? [[context, match]] : [];
}

/** The config value a driver's task is known by in search (Nomad's getConfigParam). */
const DRIVER_PARAM: Readonly<Record<string, [JobPartContext, string]>> = {
  docker: ["images", "image"],
  exec: ["commands", "command"],
  raw_exec: ["commands", "command"],
  java: ["classes", "class"],
};

function jobMatches(job: Job, text: string): [MatchContext, Scored][] {
  const namespace = job.Namespace;
  const out: [MatchContext, Scored][] = [];
  const add = (context: MatchContext, name: string, scope: string[]) => {
    const match = scored(name, text, [namespace, ...scope]);
    if (match) out.push([context, match]);
  };
  add("jobs", job.Name, [job.ID]);
  for (const group of job.TaskGroups) {
    add("groups", group.Name, [job.ID]);
    for (const service of group.Services ?? []) add("services", service.Name, [job.ID, group.Name]);
    for (const task of group.Tasks) {
      add("tasks", task.Name, [job.ID, group.Name]);
      for (const service of task.Services ?? []) add("services", service.Name, [job.ID, group.Name, task.Name]);
      const param = DRIVER_PARAM[task.Driver];
      const value = param ? task.Config?.[param[1]] : undefined;
      if (param && typeof value === "string") add(param[0], value, [job.ID, group.Name, task.Name]);
    }
  }
  return out;
}
