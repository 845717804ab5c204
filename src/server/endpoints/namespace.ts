/**
 * Namespaces (Nomad's Namespace endpoint): list, read, create or update,
 * delete. "default" always exists and cannot be deleted; a namespace that
 * still holds a job cannot be deleted either, so nothing is left in a
 * namespace that no longer exists.
 */
import { ALL_NAMESPACES, NamespaceNameSchema, NamespaceSchema, type Namespace, type NamespaceUpsert } from "../../structs/namespace.ts";
import { DEFAULT_NAMESPACE } from "../../structs/job.ts";
import { parseOrThrow } from "../../lib/validation.ts";
import { invalid, notFound } from "../errors.ts";
import type { EndpointContext } from "./context.ts";

/** Who else may hold objects in a namespace (variables, services): each says what of its own still uses it. */
export type NamespaceUsers = (name: string) => string[];

export class NamespaceEndpoint {
  constructor(
    private readonly ctx: EndpointContext,
    private readonly otherUsers: NamespaceUsers = () => [],
  ) {}

  /** By name, those starting with `prefix`; `visible` leaves out the ones the caller may not see. */
  list(prefix = "", visible: (name: string) => boolean = () => true): Namespace[] {
    return [...this.ctx.store.read.namespaces.values()]
      .filter((namespace) => namespace.Name.startsWith(prefix) && visible(namespace.Name))
      .sort((a, b) => a.Name.localeCompare(b.Name));
  }

  get(name: string): Namespace {
    const namespace = this.ctx.store.read.namespaces.get(name);
    if (!namespace) throw notFound(`namespace "${name}"`);
    return namespace;
  }

  /** PUT /v1/namespace/:name: creates it, or replaces its description, meta and capabilities. */
  upsert(name: string, body: NamespaceUpsert): { Index: number } {
    if (body.Name !== undefined && body.Name !== name) throw invalid("Namespace name does not match request path");
    if (name === ALL_NAMESPACES) throw invalid(`"${ALL_NAMESPACES}" names every namespace and cannot be one`);
    const checked = parseOrThrow(NamespaceNameSchema, name, "Name");
    return this.ctx.store.write((txn) => {
      const existing = txn.namespaces.get(checked);
      const namespace: Namespace = {
        Name: checked,
        Description: body.Description,
        Quota: body.Quota,
        Capabilities: body.Capabilities,
        Meta: body.Meta,
        CreateIndex: existing?.CreateIndex ?? txn.index,
        ModifyIndex: txn.index,
      };
      txn.namespaces.put(checked, parseOrThrow(NamespaceSchema, namespace, "namespace"));
      return { Index: txn.index };
    });
  }

  /** DELETE /v1/namespace/:name: refused for "default" and for a namespace anything still uses. */
  delete(name: string): { Index: number } {
    if (name === DEFAULT_NAMESPACE) throw invalid("default namespace can not be deleted");
    return this.ctx.store.write((txn) => {
      if (!txn.namespaces.get(name)) throw notFound(`namespace "${name}"`);
      // A dead job counts too: it is purged (or GC'd) before its namespace can go.
      const job = [...txn.jobs.allValues()].find((candidate) => candidate.Namespace === name);
      if (job) throw invalid(`namespace "${name}" contains at least one job "${job.ID}"; stop and purge its jobs before deleting it`);
      const others = this.otherUsers(name);
      if (others.length > 0) throw invalid(`namespace "${name}" still holds ${others.join(", ")}; remove them before deleting it`);
      txn.namespaces.delete(name);
      return { Index: txn.index };
    });
  }
}
