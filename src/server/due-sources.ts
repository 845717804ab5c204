/**
 * Which rows carry timed work, when it is due, and what running it does
 * (see due-work.ts): a draining node's ForceDeadline, a running
 * deployment's progress deadline, a pending follow-up evaluation's
 * WaitUntil, a periodic job's next launch.
 */
import { NS_PER_MS } from "../lib/units.ts";
import type { Deployment } from "../structs/deployment.ts";
import type { Evaluation } from "../structs/evaluation.ts";
import type { Job } from "../structs/job.ts";
import type { Node } from "../structs/node.ts";
import type { PeriodicLaunch } from "../structs/periodic.ts";
import { GO_ZERO_TIME } from "../structs/node.ts";
import { checkProgress, progressDeadline } from "./deployments/actions.ts";
import { advanceDrains, forceDeadlineNanos } from "./drain/drainer.ts";
import { launchDue, nextLaunchMs } from "./children/periodic.ts";
import { evaluate, type SchedulerDeps } from "./scheduler/evaluate.ts";
import type { StateTables } from "./state/persist.ts";
import type { WriteTxn } from "./state/store.ts";

const DRAIN = "drain:";
const DEPLOYMENT = "deployment:";
const FOLLOWUP = "followup:";
const PERIODIC = "periodic:";

type Due = [key: string, atMs: number | undefined];

const ms = (ns: number | undefined) => (ns === undefined ? undefined : Math.ceil(ns / NS_PER_MS));

const drainDue = (id: string, node: Node | null): Due => [DRAIN + id, node ? ms(forceDeadlineNanos(node)) : undefined];
const deploymentDue = (allocs: Parameters<typeof progressDeadline>[0], id: string, deployment: Deployment | null): Due => [
  DEPLOYMENT + id,
  deployment ? ms(progressDeadline(allocs, deployment)) : undefined,
];
const followupDue = (id: string, evaluation: Evaluation | null): Due => [
  FOLLOWUP + id,
  evaluation?.Status === "pending" && evaluation.WaitUntil !== GO_ZERO_TIME ? Date.parse(evaluation.WaitUntil) : undefined,
];
const periodicDue = (id: string, job: Job | undefined, launch: PeriodicLaunch | undefined): Due => [PERIODIC + id, job ? nextLaunchMs(job, launch) : undefined];

/** Every due time in the state, when the server opens. */
export function dueOfState(tables: Readonly<StateTables>): Due[] {
  const allocs = { allocs: tables.allocs };
  return [
    ...[...tables.nodes].map(([id, node]) => drainDue(id, node)),
    ...[...tables.deployments].map(([id, deployment]) => deploymentDue(allocs, id, deployment)),
    ...[...tables.evals].map(([id, evaluation]) => followupDue(id, evaluation)),
    ...[...tables.jobs].map(([id, job]) => periodicDue(id, job, tables.periodicLaunches.get(id))),
  ].filter(([, at]) => at !== undefined);
}

/** The due times a commit changed: only the rows it wrote. */
export function dueOfChanges(txn: WriteTxn): Due[] {
  const out: Due[] = [];
  for (const [id, node] of txn.nodes.changed) out.push(drainDue(id, node));
  for (const [id, deployment] of txn.deployments.changed) out.push(deploymentDue(txn, id, deployment));
  for (const [id, evaluation] of txn.evals.changed) out.push(followupDue(id, evaluation));
  const periodic = new Set([...txn.jobs.changed.keys(), ...txn.periodicLaunches.changed.keys()]);
  for (const id of periodic) out.push(periodicDue(id, txn.jobs.get(id), txn.periodicLaunches.get(id)));
  return out;
}

/** Does the work of the keys that fell due, inside one write. */
export function runDue(txn: WriteTxn, deps: SchedulerDeps, keys: readonly string[]): void {
  if (keys.some((key) => key.startsWith(DRAIN))) advanceDrains(txn, deps);
  for (const key of keys) {
    if (key.startsWith(DEPLOYMENT)) checkProgress(txn, deps, key.slice(DEPLOYMENT.length));
    else if (key.startsWith(FOLLOWUP)) {
      const evaluation = txn.evals.get(key.slice(FOLLOWUP.length));
      if (evaluation?.Status === "pending" && txn.jobs.get(evaluation.JobID)) evaluate(txn, deps, evaluation.JobID, evaluation.TriggeredBy, evaluation);
    } else if (key.startsWith(PERIODIC)) launchDue(txn, deps, key.slice(PERIODIC.length));
  }
}
