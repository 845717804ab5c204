/**
 * Prefix search (Nomad's Search endpoint, `nomad status <prefix>`): IDs
 * that start with a prefix, per context, at most TRUNCATE_LIMIT each.
 */
import { invalid } from "../errors.ts";
import type { TableName } from "../state/store.ts";
import { byPrefix, type EndpointContext } from "./context.ts";
import type { DeploymentEndpoint } from "./deployment.ts";

/** Nomad's truncateLimit: matches listed per context. */
export const TRUNCATE_LIMIT = 20;

/** Nomad's OSS contexts, in its order; "all" searches each. drover has no CSI plugins or volumes: those are always empty. */
export const SEARCH_CONTEXTS = ["allocs", "jobs", "nodes", "evals", "deployment", "plugins", "volumes"] as const;
export type SearchContext = (typeof SEARCH_CONTEXTS)[number];

export interface SearchResponse {
  Matches: Partial<Record<SearchContext, string[]>>;
  Truncations: Partial<Record<SearchContext, boolean>>;
}

/** The table whose index a search of each context reports. */
export const SEARCH_TABLES: Readonly<Record<SearchContext, TableName>> = {
  allocs: "allocs",
  jobs: "jobs",
  nodes: "nodes",
  evals: "evals",
  deployment: "deployments",
  plugins: "nodes",
  volumes: "nodes",
};

export class SearchEndpoint {
  constructor(
    private readonly ctx: EndpointContext,
    private readonly deployments: DeploymentEndpoint,
  ) {}

  /** The contexts `context` names ("all": every one); an unknown one is a user error. */
  contexts(context: string): SearchContext[] {
    if (context === "all") return [...SEARCH_CONTEXTS];
    if ((SEARCH_CONTEXTS as readonly string[]).includes(context)) return [context as SearchContext];
    throw invalid(`context must be one of [${SEARCH_CONTEXTS.join(" ")}] or 'all' for all contexts; got "${context}"`);
  }

  /** `context`: a context's name ("all" for each), or the contexts to search. */
  prefixSearch(prefix: string, context: string | readonly SearchContext[], visible: (context: SearchContext, namespace: string) => boolean = () => true): SearchResponse {
    const response: SearchResponse = { Matches: {}, Truncations: {} };
    for (const name of typeof context === "string" ? this.contexts(context) : context) {
      const ids = this.ids(name, prefix, (namespace) => visible(name, namespace));
      response.Matches[name] = ids.slice(0, TRUNCATE_LIMIT);
      response.Truncations[name] = ids.length > TRUNCATE_LIMIT;
    }
    return response;
  }

  private ids(context: SearchContext, prefix: string, inNamespace: (namespace: string) => boolean): string[] {
    const { store } = this.ctx;
    const { read } = store;
    const matching = (items: Iterable<{ ID: string; Namespace?: string }>) => byPrefix(items, prefix, inNamespace).map((item) => item.ID);
    switch (context) {
      case "allocs":
        return matching(read.allocs.listed((alloc) => alloc, () => store.coldLists.allocIds(prefix)));
      case "jobs":
        return matching([...read.jobs.hotValues(), ...store.coldJobs.listed()]);
      case "nodes":
        return matching(read.nodes.values());
      case "evals":
        return matching(read.evals.listed((evaluation) => evaluation, () => store.coldLists.evalIds(prefix)));
      case "deployment":
        return this.deployments.list(prefix, inNamespace).map((deployment) => String(deployment.ID));
      case "plugins":
      case "volumes":
        return [];
    }
  }
}
