/**
 * What each route of the API needs from a caller's ACL: one table, checked
 * once per request at the HTTP boundary (guard.ts). The rules are Nomad's,
 * as its endpoints check them (nomad/*_endpoint.go, client/*_endpoint.go,
 * command/agent/*_endpoint.go), so a policy written for Nomad grants the
 * same here.
 *
 * A route without a row stops createApp with the route's name: adding a
 * route means adding its row here, e.g.
 *
 *   route(WRITE, "/v1/job/:id/dispatch", namespace("dispatch-job")),
 *
 * Namespace rules are judged in the request's namespace (?namespace=,
 * "default" when absent), or in the addressed object's own (guard.ts,
 * object-namespace.ts); lists show only what the caller may read there.
 */
import type { RouterRoute } from "hono/types";
import type { Acl } from "../../acl/acl.ts";
import type { NamespaceCapability, Scope } from "../../acl/capabilities.ts";

export type Rule =
  /** Anyone, with or without a token (Nomad checks none: health, leader, bootstrap). */
  | { kind: "public" }
  /** Any caller whose token resolves, or none; the endpoint narrows what it shows (its own token, its policies). */
  | { kind: "caller" }
  /** Any caller whose token resolves, or none; the variables endpoint judges each path by the token's `variables` rules. */
  | { kind: "variables" }
  | { kind: "management" }
  /** Any of these capabilities in the namespace. */
  | { kind: "namespace"; anyOf: readonly NamespaceCapability[] }
  /** Any capability at all in the namespace (it may be named and listed). */
  | { kind: "namespace-listed" }
  | { kind: "scope"; scope: Scope; level: "read" | "write" }
  | { kind: "plugin"; level: "read" | "list" }
  | { kind: "any"; of: readonly Rule[] }
  | { kind: "all"; of: readonly Rule[] }
  /** A rule that depends on the request's query (the event stream's topics). */
  | { kind: "by-query"; describe: string; pick(query: QueryView): Rule }
  /**
   * A websocket whose token may come in its first frame (Nomad's
   * ws_handshake=true, what its web UI sends): with the handshake, the route
   * itself checks `rule` once the frame names the token (caller.ts).
   */
  | { kind: "handshake"; rule: Rule };

export interface QueryView {
  query(name: string): string | undefined;
  queries(name: string): string[];
}

/** A write route answers PUT and POST alike, as Nomad's do; route files mount theirs with it. */
export const WRITE: string[] = ["PUT", "POST"];

export const PUBLIC: Rule = { kind: "public" };
export const CALLER: Rule = { kind: "caller" };
export const MANAGEMENT: Rule = { kind: "management" };
export const VARIABLES: Rule = { kind: "variables" };
export const namespace = (...anyOf: NamespaceCapability[]): Rule => ({ kind: "namespace", anyOf });
export const NAMESPACE_LISTED: Rule = { kind: "namespace-listed" };
export const scope = (name: Scope, level: "read" | "write"): Rule => ({ kind: "scope", scope: name, level });
export const plugin = (level: "read" | "list"): Rule => ({ kind: "plugin", level });
export const anyOf = (...of: Rule[]): Rule => ({ kind: "any", of });
export const allOf = (...of: Rule[]): Rule => ({ kind: "all", of });
export const handshake = (rule: Rule): Rule => ({ kind: "handshake", rule });

/** Nomad 1.x's event stream: each topic asked for needs its own right; every topic ("*") needs management. */
const EVENT_TOPIC_RULES: Readonly<Record<string, Rule>> = {
  Job: namespace("read-job"),
  Allocation: namespace("read-job"),
  Evaluation: namespace("read-job"),
  Deployment: namespace("read-job"),
  Service: namespace("read-job"),
  Node: scope("node", "read"),
};
const eventTopics: Rule = {
  kind: "by-query",
  describe: "per topic: read-job for Job, Allocation, Evaluation, Deployment, Service; node:read for Node; management for * or none",
  pick(query) {
    const topics = query.queries("topic").map((value) => value.split(":")[0]!);
    if (topics.length === 0) return MANAGEMENT;
    return allOf(...topics.map((topic) => EVENT_TOPIC_RULES[topic] ?? MANAGEMENT));
  },
};

export interface RouteRule {
  methods: readonly string[];
  path: string;
  rule: Rule;
}

const route = (methods: string | readonly string[], path: string, rule: Rule): RouteRule => ({ methods: typeof methods === "string" ? [methods] : methods, path, rule });

export const ROUTE_RULES: readonly RouteRule[] = [
  // The agent (command/agent/agent_endpoint.go).
  route("GET", "/v1/agent/self", scope("agent", "read")),
  route("GET", "/v1/agent/members", scope("node", "read")),
  route("GET", "/v1/agent/servers", scope("agent", "read")),
  route("GET", "/v1/agent/health", PUBLIC),
  // Nomad checks agent:write on force-leave; join changes the cluster too, so it needs the same here.
  route(WRITE, "/v1/agent/join", scope("agent", "write")),
  route(WRITE, "/v1/agent/force-leave", scope("agent", "write")),
  route("GET", "/v1/agent/monitor", scope("agent", "read")),
  // Nomad leaves metrics open; drover's carry job and task names, so they need agent:read (Prometheus sends a bearer token).
  route("GET", "/v1/metrics", scope("agent", "read")),
  route("GET", "/v1/client/stats", scope("node", "read")),

  // The one-agent cluster (status, region, operator and namespace endpoints).
  route("GET", "/v1/status/leader", PUBLIC),
  route("GET", "/v1/status/peers", PUBLIC),
  route("GET", "/v1/regions", PUBLIC),
  route("GET", "/v1/operator/raft/configuration", MANAGEMENT),
  // nomad/keyring_endpoint.go: every keyring operation needs a management token.
  route("GET", "/v1/operator/keyring/keys", MANAGEMENT),
  route(WRITE, "/v1/operator/keyring/rotate", MANAGEMENT),
  route("DELETE", "/v1/operator/keyring/key/:id", MANAGEMENT),
  // The list shows only namespaces the caller holds a right in; one namespace is judged in itself (object-namespace.ts).
  route("GET", "/v1/namespaces", CALLER),
  route("GET", "/v1/namespace/:name", NAMESPACE_LISTED),
  route([...WRITE, "DELETE"], "/v1/namespace/:name", MANAGEMENT),
  route(WRITE, "/v1/namespace", MANAGEMENT),

  // Jobs (nomad/job_endpoint.go); parse is Nomad 1.x's parse-job.
  route("GET", "/v1/jobs", namespace("list-jobs")),
  route(WRITE, "/v1/jobs", namespace("submit-job")),
  route(WRITE, "/v1/jobs/parse", namespace("parse-job", "submit-job")),
  route(WRITE, "/v1/validate/job", namespace("read-job")),
  route("GET", "/v1/job/:id", namespace("read-job")),
  route(WRITE, "/v1/job/:id", namespace("submit-job")),
  route("DELETE", "/v1/job/:id", namespace("submit-job")),
  route("GET", "/v1/job/:id/allocations", namespace("read-job")),
  route("GET", "/v1/job/:id/evaluations", namespace("read-job")),
  route("GET", "/v1/job/:id/summary", namespace("read-job")),
  route("GET", "/v1/job/:id/versions", namespace("read-job")),
  route("GET", "/v1/job/:id/deployments", namespace("read-job")),
  route("GET", "/v1/job/:id/deployment", namespace("read-job")),
  route(WRITE, "/v1/job/:id/plan", namespace("submit-job")),
  route(WRITE, "/v1/job/:id/revert", namespace("submit-job")),
  route(WRITE, "/v1/job/:id/evaluate", namespace("read-job")),
  route("GET", "/v1/job/:id/scale", namespace("read-job-scaling", "read-job")),
  route(WRITE, "/v1/job/:id/scale", namespace("scale-job", "submit-job")),
  route(WRITE, "/v1/job/:id/periodic/force", namespace("submit-job")),
  route(WRITE, "/v1/job/:id/dispatch", namespace("dispatch-job")),
  route(WRITE, "/v1/job/:id/stable", namespace("submit-job")),
  // nomad/scaling_endpoint.go: the scaling capability, or both list-jobs and read-job.
  route("GET", "/v1/scaling/policies", anyOf(namespace("list-scaling-policies"), allOf(namespace("list-jobs"), namespace("read-job")))),
  route("GET", "/v1/scaling/policy/:id", anyOf(namespace("read-scaling-policy"), allOf(namespace("list-jobs"), namespace("read-job")))),
  route("GET", "/v1/deployments", namespace("read-job")),
  route("GET", "/v1/deployment/:id", namespace("read-job")),
  route("GET", "/v1/deployment/allocations/:id", namespace("read-job")),
  // nomad/deployment_endpoint.go: every change to a deployment is submit-job.
  route(WRITE, "/v1/deployment/promote/:id", namespace("submit-job")),
  route(WRITE, "/v1/deployment/fail/:id", namespace("submit-job")),
  route(WRITE, "/v1/deployment/pause/:id", namespace("submit-job")),
  route(WRITE, "/v1/deployment/allocation-health/:id", namespace("submit-job")),
  route(WRITE, "/v1/deployment/unblock/:id", namespace("submit-job")),

  // Allocations and evaluations (nomad/alloc_endpoint.go, eval_endpoint.go).
  route("GET", "/v1/allocations", namespace("read-job")),
  route("GET", "/v1/allocation/:id", namespace("read-job")),
  route(WRITE, "/v1/allocation/:id/stop", namespace("alloc-lifecycle")),
  route("GET", "/v1/evaluations", namespace("read-job")),
  route("GET", "/v1/evaluation/:id", namespace("read-job")),
  route("GET", "/v1/evaluation/:id/allocations", namespace("read-job")),

  // Nodes and the system (nomad/node_endpoint.go, system_endpoint.go); a node's allocs are shown only with read-job.
  // Node pools (nomad/node_pool_endpoint.go): drover has no node_pool ACL rules, so reads need node:read and writes a management token.
  route("GET", "/v1/node/pools", scope("node", "read")),
  route(WRITE, "/v1/node/pools", MANAGEMENT),
  route("GET", "/v1/node/pool/:name", scope("node", "read")),
  route([...WRITE, "DELETE"], "/v1/node/pool/:name", MANAGEMENT),
  route("GET", "/v1/node/pool/:name/nodes", scope("node", "read")),
  route("GET", "/v1/node/pool/:name/jobs", allOf(scope("node", "read"), namespace("list-jobs"))),
  route("GET", "/v1/nodes", scope("node", "read")),
  route("GET", "/v1/node/:id", scope("node", "read")),
  route("GET", "/v1/node/:id/allocations", scope("node", "read")),
  route(WRITE, "/v1/node/:id/drain", scope("node", "write")),
  route(WRITE, "/v1/node/:id/eligibility", scope("node", "write")),
  route(WRITE, "/v1/node/:id/evaluate", scope("node", "write")),
  route(WRITE, "/v1/node/:id/purge", scope("node", "write")),
  route(WRITE, "/v1/system/gc", MANAGEMENT),
  route(WRITE, "/v1/system/reconcile/summaries", MANAGEMENT),

  // Search, events, services: each context, topic or service with its own right.
  route(WRITE, "/v1/search", anyOf(scope("node", "read"), namespace("read-job"))),
  route(WRITE, "/v1/search/fuzzy", anyOf(scope("node", "read"), namespace("read-job"))),
  route("GET", "/v1/event/stream", eventTopics),
  route("GET", "/v1/services", namespace("read-job")),
  route("GET", "/v1/service/:name", namespace("read-job")),

  // Variables (nomad/variables_endpoint.go): judged per path by the endpoint, against the caller's variables rules.
  route("GET", "/v1/vars", VARIABLES),
  route(["GET", ...WRITE, "DELETE"], "/v1/var/:path{.+}", VARIABLES),
  route(["GET", ...WRITE, "DELETE"], "/v1/var/", VARIABLES),

  // The client (client/alloc_endpoint.go, fs_endpoint.go); exec into a raw_exec task also needs alloc-node-exec.
  route("GET", "/v1/client/allocation/:id/stats", namespace("read-job")),
  route("GET", "/v1/client/allocation/:id/checks", namespace("read-job")),
  route(WRITE, "/v1/client/allocation/:id/restart", namespace("alloc-lifecycle")),
  route(WRITE, "/v1/client/allocation/:id/signal", namespace("alloc-lifecycle")),
  route(["GET", ...WRITE], "/v1/client/allocation/:id/gc", namespace("submit-job")),
  route(["GET", ...WRITE], "/v1/client/gc", scope("node", "write")),
  route("POST", "/v1/client/allocation/:id/exec", namespace("alloc-exec")),
  route("GET", "/v1/client/allocation/:id/exec", handshake(namespace("alloc-exec"))),
  route("GET", "/v1/client/fs/logs/:alloc_id", namespace("read-logs", "read-fs")),
  route("GET", "/v1/client/fs/ls/:alloc_id", namespace("read-fs")),
  route("GET", "/v1/client/fs/stat/:alloc_id", namespace("read-fs")),
  route("GET", "/v1/client/fs/cat/:alloc_id", namespace("read-fs")),
  route("GET", "/v1/client/fs/readat/:alloc_id", namespace("read-fs")),
  route("GET", "/v1/client/fs/stream/:alloc_id", namespace("read-fs")),

  // ACLs (nomad/acl_endpoint.go): reads open to any caller show only its own token and policies.
  route(WRITE, "/v1/acl/bootstrap", PUBLIC),
  route("GET", "/v1/acl/policies", CALLER),
  route("GET", "/v1/acl/policy/:name", CALLER),
  route([...WRITE, "DELETE"], "/v1/acl/policy/:name", MANAGEMENT),
  route("GET", "/v1/acl/tokens", MANAGEMENT),
  route(WRITE, "/v1/acl/token", MANAGEMENT),
  route("GET", "/v1/acl/token/self", CALLER),
  route("GET", "/v1/acl/token/:accessor", CALLER),
  route([...WRITE, "DELETE"], "/v1/acl/token/:accessor", MANAGEMENT),

  // Workload identities' public keys (identity.ts): anyone may verify a token.
  route("GET", "/.well-known/jwks.json", PUBLIC),
  route("GET", "/.well-known/openid-configuration", PUBLIC),

  // The web UI's own files (ui.ts): no data in them; the page then calls the routes above with its token.
  route("GET", "/", PUBLIC),
  route("GET", "/ui", PUBLIC),
  route("GET", "/ui/*", PUBLIC),

  // What drover lacks, answered as Nomad without it answers (absent-features.ts).
  route("GET", "/v1/plugins", plugin("list")),
  route("GET", "/v1/volumes", namespace("csi-list-volume")),
  route("ALL", "/v1/plugin/csi/:id", plugin("read")),
  route("ALL", "/v1/volume/csi/:id", namespace("csi-read-volume")),
  route("ALL", "/v1/sentinel/*", MANAGEMENT),
  route("ALL", "/v1/quotas", scope("quota", "read")),
  route("ALL", "/v1/quota-usages", scope("quota", "read")),
  route("ALL", "/v1/quota", scope("quota", "write")),
  route("ALL", "/v1/quota/*", scope("quota", "read")),
  route("ALL", "/v1/operator/license", scope("operator", "read")),
];

const key = (method: string, path: string) => `${method} ${path}`;

/** Each mounted route's rule; throws naming every route the table lacks. */
export function bindRouteRules(routes: readonly RouterRoute[], table: readonly RouteRule[] = ROUTE_RULES): Map<RouterRoute, Rule> {
  const byKey = new Map<string, Rule>();
  for (const entry of table) for (const method of entry.methods) byKey.set(key(method, entry.path), entry.rule);
  const bound = new Map<RouterRoute, Rule>();
  const missing: string[] = [];
  for (const mounted of routes) {
    const rule = byKey.get(key(mounted.method, mounted.path));
    if (rule) bound.set(mounted, rule);
    else missing.push(key(mounted.method, mounted.path));
  }
  if (missing.length > 0) throw new Error(`routes without an ACL rule in src/api/acl/route-rules.ts: ${[...new Set(missing)].join(", ")}`);
  return bound;
}

/** Whether `acl` passes `rule` for a request in `namespace`. A handshake rule is judged here as its inner rule. */
export function allows(rule: Rule, acl: Acl, namespaceName: string, query: QueryView): boolean {
  switch (rule.kind) {
    case "public":
    case "caller":
    case "variables":
      return true;
    case "management":
      return acl.isManagement;
    case "namespace":
      return rule.anyOf.some((capability) => acl.allowNamespaceOperation(namespaceName, capability));
    case "namespace-listed":
      return acl.allowNamespace(namespaceName);
    case "scope":
      return acl.allowScope(rule.scope, rule.level);
    case "plugin":
      return acl.allowPlugin(rule.level);
    case "any":
      return rule.of.some((inner) => allows(inner, acl, namespaceName, query));
    case "all":
      return rule.of.every((inner) => allows(inner, acl, namespaceName, query));
    case "by-query":
      return allows(rule.pick(query), acl, namespaceName, query);
    case "handshake":
      return allows(rule.rule, acl, namespaceName, query);
  }
}
