/**
 * A constraint's or affinity's target resolved against a node, as Nomad's
 * resolveTarget does: a literal stands for itself; `${node.*}`, `${attr.*}`
 * and `${meta.*}` read the node (drivers show up as `${attr.driver.<name>}`).
 * A target the node lacks is "not found", which the operators treat as nil.
 */
import type { Node } from "../../../structs/node.ts";

export interface Resolved {
  value: string | undefined;
  found: boolean;
}

const found = (value: string | undefined): Resolved => ({ value, found: value !== undefined });

export function resolveTarget(target: string, node: Node): Resolved {
  if (!target.startsWith("${")) return { value: target, found: true };
  switch (target) {
    case "${node.unique.id}":
      return found(node.ID);
    case "${node.datacenter}":
      return found(node.Datacenter);
    case "${node.unique.name}":
      return found(node.Name);
    case "${node.class}":
      return found(node.NodeClass);
    case "${node.pool}":
      return found(node.NodePool);
  }
  const inner = target.slice(2, target.endsWith("}") ? -1 : undefined);
  if (inner.startsWith("attr.")) return found(node.Attributes[inner.slice("attr.".length)]);
  if (inner.startsWith("meta.")) return found(node.Meta[inner.slice("meta.".length)]);
  return { value: undefined, found: false };
}
