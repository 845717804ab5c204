/**
 * Node pools (Nomad 1.6's NodePool endpoint): list, read, create or update,
 * delete, and the nodes and jobs of one. The built-in "default" and "all"
 * are always there and may be neither changed nor deleted; a pool that
 * still holds a node or a job that is not dead cannot be deleted either, so
 * nothing is left naming a pool that no longer exists.
 */
import { parseOrThrow } from "../../lib/validation.ts";
import { isBuiltInNodePool, nodeInPool, NodePoolSchema, type NodePool, type NodePoolUpsert } from "../../structs/node-pool.ts";
import type { Node } from "../../structs/node.ts";
import { invalid, notFound } from "../errors.ts";
import type { WriteTxn } from "../state/store.ts";
import type { EndpointContext } from "./context.ts";

export class NodePoolEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** By name, those starting with `prefix`. */
  list(prefix = ""): NodePool[] {
    return [...this.ctx.store.read.nodePools.values()].filter((pool) => pool.Name.startsWith(prefix)).sort((a, b) => a.Name.localeCompare(b.Name));
  }

  get(name: string): NodePool {
    const pool = this.ctx.store.read.nodePools.get(name);
    if (!pool) throw notFound("node pool");
    return pool;
  }

  /** The pool's nodes ("all": every node); none for a pool that does not exist, as Nomad answers. */
  nodes(name: string): Node[] {
    if (!this.ctx.store.read.nodePools.has(name)) return [];
    return [...this.ctx.store.read.nodes.values()].filter((node) => nodeInPool(name, node.NodePool));
  }

  /** Whether a job naming `pool` is one of the pool's jobs (for "all", only those that name "all"), as Nomad's ListJobs; none for a pool that does not exist. */
  holdsJobsOf(pool: string): (jobPool: string) => boolean {
    const exists = this.ctx.store.read.nodePools.has(pool);
    return (jobPool) => exists && jobPool === pool;
  }

  /** PUT /v1/node/pools and /v1/node/pool/:name: creates the pool, or replaces its description, meta and scheduler configuration. */
  upsert(body: NodePoolUpsert): { Index: number } {
    const checked = parseOrThrow(NodePoolSchema, { ...body, CreateIndex: 0, ModifyIndex: 0 }, `node pool "${body.Name}"`);
    if (isBuiltInNodePool(checked.Name)) throw invalid(`modifying node pool "${checked.Name}" is not allowed`);
    return this.ctx.store.write((txn) => {
      const existing = txn.nodePools.get(checked.Name);
      txn.nodePools.put(checked.Name, { ...checked, CreateIndex: existing?.CreateIndex ?? txn.index, ModifyIndex: txn.index });
      return { Index: txn.index };
    });
  }

  /** DELETE /v1/node/pool/:name: refused for the built-in pools and for a pool a node or a live job is in. */
  delete(name: string): { Index: number } {
    if (isBuiltInNodePool(name)) throw invalid(`deleting built-in node pool "${name}" is not allowed`);
    return this.ctx.store.write((txn) => {
      if (!txn.nodePools.get(name)) throw notFound(`node pool "${name}"`);
      const problems: string[] = [];
      if (txn.jobs.filter((job) => job.NodePool === name && job.Status !== "dead").length > 0) problems.push(`node pool "${name}" has non-terminal jobs`);
      if (txn.nodes.filter((node) => node.NodePool === name).length > 0) problems.push(`node pool "${name}" has nodes`);
      if (problems.length > 0) throw invalid(problems.join("; "));
      txn.nodePools.delete(name);
      return { Index: txn.index };
    });
  }
}

/**
 * The pool a registering node names, created as Nomad creates it (empty)
 * when it does not exist yet, so a node's pool is always listed.
 */
export function ensureNodePool(txn: WriteTxn, name: string): void {
  if (txn.nodePools.get(name)) return;
  txn.nodePools.put(name, { Name: name, Description: "", Meta: null, SchedulerConfiguration: null, CreateIndex: txn.index, ModifyIndex: txn.index });
}
