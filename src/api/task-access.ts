/**
 * What a task may do with the agent's API: checked once per request, before
 * any route. Tasks are not operators, even with ACLs off (Nomad's default
 * leaves them the whole API): a task that could register a raw_exec job or
 * exec into another task would be root on the host.
 *
 *   request on a task's API socket (secrets/api.sock) ──> that task's identity:
 *       allowed the routes its grants cover, else 403
 *   request over TCP ──> who holds the other end (client/task-peers.ts)?
 *       a task, a caller on this host that cannot be told, or one that has
 *       closed its end already ──> anonymous task: 403
 *       anything else ──> on to the routes
 *
 * With ACLs on, a task is a caller like any other, at most anonymous: what
 * its own grant covers passes; anything else goes on to the ACL check, which
 * judges the token the task presents, or the anonymous policy without one.
 *
 * With ACLs off, a task on its socket may also read its own job's
 * variables, the paths Nomad's implicit policy gives a workload
 * (nomad/jobs, nomad/jobs/<job>[/<group>[/<task>]]); with ACLs on it shows
 * its workload identity for them, as in Nomad.
 *
 * A task identity carries grants, each a Nomad ACL capability over a scope.
 * Today every task gets the same grants (its own alloc, read-only); a job's
 * identity block and ACL policies can add to them through `grantsFor`
 * without changing the check.
 */
import type { MiddlewareHandler } from "hono";
import { workloadPaths } from "../acl/acl.ts";
import { grantWithoutToken } from "./acl/caller.ts";
import type { PeerVerdict } from "../client/task-peers.ts";
import { DEFAULT_NAMESPACE } from "../structs/job.ts";
import type { TaskIdentity } from "../client/taskrunner/hooks/task-api.ts";
import type { Connection } from "../runtime/serve.ts";
import type { Endpoint } from "../runtime/sock-diag.ts";

/** What the HTTP server hands each request (c.env). */
export interface RequestOrigin {
  connection: Connection;
  /** Set on a task's API socket: the task the agent bound to it. */
  task?: TaskIdentity;
  /** The runtime's server, where Hono's websocket upgrade looks for it. */
  server?: unknown;
}

/** Nomad's ACL capability names, those a task's grant can hold today. */
export type Capability = "read-job" | "read-logs";

/** A capability over a scope: today only the task's own allocation. */
export interface Grant {
  capability: Capability;
  scope: "own-alloc";
}

/** What every task may do through its API socket unless a policy says more. */
export const DEFAULT_TASK_GRANTS: readonly Grant[] = [
  { capability: "read-job", scope: "own-alloc" },
  { capability: "read-logs", scope: "own-alloc" },
];

/** Routes a task identity can be granted, each with the capability it needs and where the alloc id is. */
const TASK_ROUTES: readonly { method: string; path: RegExp; capability: Capability | null }[] = [
  { method: "GET", path: /^\/v1\/agent\/health$/, capability: null },
  { method: "GET", path: /^\/v1\/allocation\/([^/]+)$/, capability: "read-job" },
  { method: "GET", path: /^\/v1\/client\/allocation\/([^/]+)\/stats$/, capability: "read-job" },
  { method: "GET", path: /^\/v1\/client\/fs\/logs\/([^/]+)$/, capability: "read-logs" },
];

/** Nomad's answer to a caller without the right, word for word (a plain-text body, as Nomad sends it). */
export const PERMISSION_DENIED = "Permission denied";

export interface TaskAccessOptions {
  /** ACLs on (acl/guard.ts runs next): tasks are judged there, by their token or as anonymous. */
  aclEnabled?: boolean;
  /** Who holds the other end of a TCP connection. */
  identifyPeer(remote: Endpoint, local: Endpoint): PeerVerdict;
  /** The grants of a task identity (ACL policies plug in here). */
  grantsFor?(task: TaskIdentity): readonly Grant[];
  /** Told of each refusal, for the agent log. */
  refused?(refusal: Refusal, method: string, path: string): void;
}

/**
 * Why a request was refused, and from whom: a task, a caller on this host
 * that cannot be identified, or one that closed its connection before it was
 * judged (nobody reads that answer: not worth an operator's attention).
 */
export interface Refusal {
  why: string;
  caller: "task" | "unidentified" | "gone";
}

/** Whether `task`, holding `grants`, may make this request. */
export function taskMayCall(task: TaskIdentity, grants: readonly Grant[], method: string, path: string): boolean {
  for (const route of TASK_ROUTES) {
    if (route.method !== method) continue;
    const match = route.path.exec(path);
    if (!match) continue;
    if (route.capability === null) return true;
    const allocId = decodeURIComponent(match[1]!);
    return grants.some((grant) => grant.capability === route.capability && grant.scope === "own-alloc" && allocId === task.allocId);
  }
  return false;
}

const VARIABLE_PATH = /^\/v1\/var\/(.+)$/;

/** Whether `path` is GET /v1/var/ of one of the variables Nomad lets a workload read without a policy. */
export function isOwnVariable(task: TaskIdentity, path: string, namespace: string | undefined): boolean {
  const match = VARIABLE_PATH.exec(path);
  // No ?namespace= is the default namespace (as the route reads it), not the task's own.
  if (!match || (namespace || DEFAULT_NAMESPACE) !== task.namespace) return false;
  return workloadPaths({ job: task.jobId, group: task.group, task: task.taskName }).includes(decodeURIComponent(match[1]!));
}

export function taskAccess(options: TaskAccessOptions): MiddlewareHandler<{ Bindings: RequestOrigin }> {
  const grantsFor = options.grantsFor ?? (() => DEFAULT_TASK_GRANTS);
  return async (c, next) => {
    // No connection: a caller inside the agent (a Nomad server's request forwarded over RPC, answered by the same routes).
    if (c.env?.connection === undefined) return next();
    const method = c.req.method === "HEAD" ? "GET" : c.req.method;
    if (options.aclEnabled) {
      const { task } = c.env;
      if (task && taskMayCall(task, grantsFor(task), method, c.req.path)) grantWithoutToken(c);
      return next();
    }
    const { task } = c.env;
    if (task && method === "GET" && isOwnVariable(task, c.req.path, c.req.query("namespace"))) return next();
    const found = refusal(c.env, method, c.req.path, c.req.raw.signal);
    if (found === null) return next();
    options.refused?.(found, c.req.method, c.req.path);
    return c.text(PERMISSION_DENIED, 403);
  };

  /** Why this request is refused, or null when it may go on. */
  function refusal({ connection, task }: RequestOrigin, method: string, path: string, request: AbortSignal): Refusal | null {
    if (task) return taskMayCall(task, grantsFor(task), method, path) ? null : { why: `task ${task.allocId}/${task.taskName} holds no grant for it`, caller: "task" };
    // A unix socket the agent serves is always a task's, bound with its identity.
    if (connection.kind !== "tcp") return { why: "a unix socket without a task identity", caller: "task" };
    const verdict = options.identifyPeer(connection.remote, connection.local);
    if (verdict.kind === "task") return { why: `the caller is task ${verdict.task.allocId}/${verdict.task.taskName}, with no token`, caller: "task" };
    // A socket found nowhere is gone too when the server has seen its connection close.
    if (verdict.kind === "gone" || (verdict.kind === "unknown-local" && request.aborted)) return { why: "the caller closed its connection before the request was judged", caller: "gone" };
    if (verdict.kind === "unknown-local") return { why: "the caller is on this host, but no process holds its socket", caller: "unidentified" };
    return null;
  }
}
