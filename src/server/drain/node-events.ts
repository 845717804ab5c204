/** A node's history: events appended by the server, the last MAX_NODE_EVENTS kept. */
import { isoOfNanos } from "../../structs/common.ts";
import { MAX_NODE_EVENTS, type Node, type NodeEvent } from "../../structs/node.ts";
import type { WriteTxn } from "../state/store.ts";

/** `node` with one more event, stamped with the write's time and index, and the write's ModifyIndex. */
export function withNodeEvent(
  txn: Pick<WriteTxn, "index" | "now">,
  node: Node,
  subsystem: string,
  message: string,
  details: Record<string, string> | null = null,
): Node {
  const event: NodeEvent = {
    Message: message,
    Subsystem: subsystem,
    Details: details,
    Timestamp: isoOfNanos(txn.now),
    CreateIndex: txn.index,
  };
  return { ...node, Events: [...node.Events, event].slice(-MAX_NODE_EVENTS), ModifyIndex: txn.index };
}
