/**
 * The event stream's events (Nomad 1.x's structs.Event): what one committed
 * write changed, one event per changed job, allocation, evaluation or node,
 * with the object as it is after the write (before it, for a removal).
 *
 *   {"Topic": "Allocation", "Type": "AllocationUpdated", "Key": "<alloc id>",
 *    "Namespace": "default", "FilterKeys": ["<job id>", ""], "Index": 42,
 *    "Payload": {"Allocation": {...}}}
 *
 * Nomad names an event's Type after the kind of write; drover's writes are
 * not labelled, so the Type is read from what changed: a new alloc or one
 * the server changed is a PlanResult, one the client reported is
 * AllocationUpdated; a stopped or purged job JobDeregistered; a node's
 * drain NodeDrain, its eligibility NodeEligibility, its first registration
 * NodeRegistration, anything else about it NodeStreamEvent.
 */
import { apiAllocation, type Allocation } from "../../structs/alloc.ts";
import type { Deployment } from "../../structs/deployment.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import type { Job } from "../../structs/job.ts";
import { apiNode, type Node } from "../../structs/node.ts";
import type { StateTables } from "../state/persist.ts";
import type { WriteTxn } from "../state/store.ts";

export const TOPICS = ["Job", "Allocation", "Evaluation", "Node", "Deployment"] as const;
export type Topic = (typeof TOPICS)[number];

export interface StreamEvent {
  Topic: Topic;
  Type: string;
  Key: string;
  Namespace: string;
  FilterKeys: string[] | null;
  Index: number;
  Payload: Record<string, unknown>;
}

function jobEvent(index: number, before: Job | undefined, after: Job | null): StreamEvent | undefined {
  const job = after ?? before;
  if (!job) return undefined;
  const stopped = after === null || (after.Stop && !before?.Stop);
  return { Topic: "Job", Type: stopped ? "JobDeregistered" : "JobRegistered", Key: job.ID, Namespace: job.Namespace, FilterKeys: null, Index: index, Payload: { Job: job } };
}

/**
 * An allocation's event. Its payload is made when a subscriber reads it: every write of a
 * thousand-task node has allocation events, most are never streamed, and the buffer then holds
 * the (frozen) alloc, not a copy. A class with the getter on its prototype, since the buffer holds
 * thousands of these (issue 35: the agent's memory per task). Nomad leaves the job out of
 * allocation events to keep them small.
 */
class AllocationEvent implements StreamEvent {
  readonly Topic = "Allocation";
  private payload: Record<string, unknown> | undefined;

  constructor(
    readonly Type: string,
    readonly Index: number,
    private readonly alloc: Allocation,
  ) {}

  get Key(): string {
    return this.alloc.ID;
  }

  get Namespace(): string {
    return this.alloc.Namespace;
  }

  /** Made when a subscriber's filter or the stream reads it, not kept with every buffered event. */
  get FilterKeys(): string[] {
    return [this.alloc.JobID, ""];
  }

  get Payload(): Record<string, unknown> {
    this.payload ??= { Allocation: { ...apiAllocation(this.alloc), Job: null } };
    return this.payload;
  }

  /** What JSON.stringify writes: Nomad's fields in Nomad's order, not the class's own. */
  toJSON(): StreamEvent {
    return { Topic: this.Topic, Type: this.Type, Key: this.Key, Namespace: this.Namespace, FilterKeys: this.FilterKeys, Index: this.Index, Payload: this.Payload };
  }
}

function allocEvent(index: number, before: Allocation | undefined, after: Allocation | null): StreamEvent | undefined {
  const alloc = after ?? before;
  if (!alloc) return undefined;
  const byServer = !before || after === null || after.AllocModifyIndex === index;
  return new AllocationEvent(byServer ? "PlanResult" : "AllocationUpdated", index, alloc);
}

function evalEvent(index: number, after: Evaluation): StreamEvent {
  return { Topic: "Evaluation", Type: "EvaluationUpdated", Key: after.ID, Namespace: after.Namespace, FilterKeys: [after.JobID, ""], Index: index, Payload: { Evaluation: after } };
}

function nodeType(before: Node | undefined, after: Node | null): string {
  if (after === null) return "NodeDeregistration";
  if (!before) return "NodeRegistration";
  if (before.DrainStrategy !== after.DrainStrategy) return "NodeDrain";
  if (before.SchedulingEligibility !== after.SchedulingEligibility) return "NodeEligibility";
  return "NodeStreamEvent";
}

function nodeEvent(index: number, before: Node | undefined, after: Node | null): StreamEvent | undefined {
  const node = after ?? before;
  if (!node) return undefined;
  return { Topic: "Node", Type: nodeType(before, after), Key: node.ID, Namespace: "", FilterKeys: null, Index: index, Payload: { Node: apiNode(node) } };
}

function deploymentEvent(index: number, before: Deployment | undefined, after: Deployment): StreamEvent {
  const type = before && before.Status !== after.Status ? "DeploymentStatusUpdate" : before ? "DeploymentAllocHealth" : "DeploymentStatusUpdate";
  return { Topic: "Deployment", Type: type, Key: after.ID, Namespace: after.Namespace, FilterKeys: [after.JobID], Index: index, Payload: { Deployment: after } };
}

/** The events of one write, from the committed tables before it and its staged changes. */
export function eventsOfWrite(before: Readonly<StateTables>, txn: WriteTxn): StreamEvent[] {
  const events: (StreamEvent | undefined)[] = [];
  for (const [id, job] of txn.jobs.changed) events.push(jobEvent(txn.index, before.jobs.get(id), job));
  for (const [id, alloc] of txn.allocs.changed) events.push(allocEvent(txn.index, before.allocs.get(id), alloc));
  for (const evaluation of txn.evals.changed.values()) if (evaluation) events.push(evalEvent(txn.index, evaluation));
  for (const [id, node] of txn.nodes.changed) events.push(nodeEvent(txn.index, before.nodes.get(id), node));
  for (const [id, deployment] of txn.deployments.changed) if (deployment) events.push(deploymentEvent(txn.index, before.deployments.get(id), deployment));
  return events.filter((event): event is StreamEvent => event !== undefined);
}
