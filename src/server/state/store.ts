/**
 * The server's state: every table in memory for reads, written through to
 * SQLite one transaction per request.
 *
 *   write(fn) ──> fn stages changes in a WriteTxn (reads see them) ──> nothing staged? done
 *                    │ fn throws: nothing happened                          │
 *                    ▼                                                      ▼
 *                 (error)             persist in ONE SQLite transaction at index N+1
 *                                        │ SQLite error (disk full, ...): memory untouched, error
 *                                        ▼
 *                                apply to memory ──> table indexes ──> wake blocking queries
 *                                                                     ──> publish its events (event stream)
 *
 * Every write gets the next index (Nomad's Raft index); the objects it
 * changes carry it as ModifyIndex. Reads never see a half-applied write:
 * JavaScript runs each write to the end before anything else.
 */
import { isDiskFull, writeWithReserve, type DiskReserve } from "../../state/reserve.ts";
import type { ServerStateDb } from "../../state/server/db.ts";
import { allocListStub, type Allocation, type AllocListStub } from "../../structs/alloc.ts";
import { NS_PER_MS } from "../../lib/units.ts";
import type { Evaluation } from "../../structs/evaluation.ts";
import type { Deployment } from "../../structs/deployment.ts";
import type { Job } from "../../structs/job.ts";
import type { Namespace } from "../../structs/namespace.ts";
import type { Node } from "../../structs/node.ts";
import type { NodePool } from "../../structs/node-pool.ts";
import type { PeriodicLaunch } from "../../structs/periodic.ts";
import type { JobScalingEvents } from "../../structs/scaling.ts";
import { ServerError } from "../errors.ts";
import { EventBroker } from "../events/broker.ts";
import { eventsOfWrite } from "../events/events.ts";
import { allocNodeIds, loadGroup, loadState, persistChanges, type ColdLists, type StateTables, type TableChanges } from "./persist.ts";
import { TableTxn } from "./table.ts";
import { deepFreeze, type TieredTable } from "./tiered.ts";
import type { ColdGroups, ColdGroupsView } from "./cold-groups.ts";
import { finishedGroup, type ColdGroup, type GroupInMemory } from "./freezer.ts";
import { IndexWatch } from "./watch.ts";

export type TableName = "jobs" | "allocs" | "evals" | "nodes" | "deployments" | "namespaces" | "nodePools";

/** One write: staged changes over the committed tables, all stamped with `index`. */
export class WriteTxn implements TableChanges {
  readonly jobs: TableTxn<string, Job>;
  readonly versions: TableTxn<number, Job>;
  readonly allocs: TableTxn<string, Allocation>;
  readonly evals: TableTxn<string, Evaluation>;
  readonly nodes: TableTxn<string, Node>;
  readonly deployments: TableTxn<string, Deployment>;
  readonly periodicLaunches: TableTxn<string, PeriodicLaunch>;
  readonly scalingEvents: TableTxn<string, JobScalingEvents>;
  readonly namespaces: TableTxn<string, Namespace>;
  readonly nodePools: TableTxn<string, NodePool>;

  constructor(
    tables: StateTables,
    /** The index this write will commit at. */
    readonly index: number,
    /** The write's time, nanoseconds since the epoch. */
    readonly now: number,
    /** Finished jobs whose groups only SQLite holds (freezer.ts), for the GC; getting the job brings one back. */
    readonly coldGroups: ReadonlyMap<string, ColdGroup>,
  ) {
    this.jobs = new TableTxn(tables.jobs);
    this.versions = new TableTxn(tables.versions);
    this.allocs = new TableTxn(tables.allocs);
    this.evals = new TableTxn(tables.evals);
    this.nodes = new TableTxn(tables.nodes);
    this.deployments = new TableTxn(tables.deployments);
    this.periodicLaunches = new TableTxn(tables.periodicLaunches);
    this.scalingEvents = new TableTxn(tables.scalingEvents);
    this.namespaces = new TableTxn(tables.namespaces);
    this.nodePools = new TableTxn(tables.nodePools);
  }

  /** Every table of the write, in one list. */
  get tables(): TableTxn<unknown, object>[] {
    return [this.jobs, this.versions, this.allocs, this.evals, this.nodes, this.deployments, this.periodicLaunches, this.scalingEvents, this.namespaces, this.nodePools] as TableTxn<unknown, object>[];
  }

  get isChanged(): boolean {
    return this.tables.some((table) => table.isChanged);
  }
}

export interface StoreOptions {
  /** The data dir's disk reserve, released to record a write the full disk refused. */
  reserve?: DiskReserve | undefined;
  /** Milliseconds since the epoch (default: Date.now). */
  clock?: (() => number) | undefined;
  /** Keep finished jobs' groups in memory (ServerOptions.keepFinishedInMemory). */
  keepFinishedInMemory?: boolean | undefined;
}

export class StateStore {
  private committedIndex: number;
  /** Per table, the index of the last write that changed it (X-Nomad-Index of its endpoints). */
  private readonly tableIndexes: Record<TableName, number>;
  /** Per node, the last index at which the server changed or removed one of its allocs. */
  private readonly nodeAllocIndexes = new Map<string, number>();
  readonly watch = new IndexWatch();
  /** Each current alloc's list stub, once asked for (see stub()). */
  private readonly stubs = new Map<string, { alloc: Allocation; stub: AllocListStub }>();
  /** Called after each commit with its transaction (what changed), before blocking queries wake. */
  private readonly commitListeners: ((txn: WriteTxn) => void)[] = [];
  /** The event stream: every committed write's events. */
  readonly events = new EventBroker();
  /** Finished jobs whose groups left memory, with what the GC needs of them. */
  private readonly coldGroups: ColdGroups;
  /** Groups brought back to memory since the last freeze: looked at again after the write. */
  private readonly thawed = new Set<string>();

  private constructor(
    private readonly db: ServerStateDb,
    private readonly tables: StateTables,
    coldGroups: ColdGroups,
    index: number,
    private readonly reserve: DiskReserve | undefined,
    private readonly clock: () => number,
    private readonly keepFinishedInMemory: boolean,
    /** The small stored rows lists of finished objects read (persist.ts). */
    readonly coldLists: ColdLists,
  ) {
    this.committedIndex = index;
    // After a restart every table reports the last index: a blocking query from before answers at once.
    this.tableIndexes = { jobs: index, allocs: index, evals: index, nodes: index, deployments: index, namespaces: index, nodePools: index };
    this.coldGroups = coldGroups;
    for (const node of tables.nodes.keys()) this.nodeAllocIndexes.set(node, index);
    for (const node of allocNodeIds(db)) this.nodeAllocIndexes.set(node, index);
    const thaw = (group: string) => this.thaw(group);
    for (const table of [tables.jobs, tables.versions, tables.allocs, tables.evals] as TieredTable<unknown, object>[]) table.thawWith(thaw);
  }

  /** Objects in memory and only in SQLite, per table with finished groups (tests; the agent's own metrics). */
  get tiers(): Record<"jobs" | "versions" | "allocs" | "evals", { inMemory: number; onlyStored: number }> {
    const { jobs, versions, allocs, evals } = this.tables;
    const tier = (table: TieredTable<unknown, object>) => ({ inMemory: table.hotSize, onlyStored: table.coldSize });
    return { jobs: tier(jobs), versions: tier(versions), allocs: tier(allocs), evals: tier(evals) };
  }

  /** Finished jobs whose groups only SQLite holds, by job ID (readers: lists and searches). */
  get coldJobs(): ColdGroupsView {
    return this.coldGroups;
  }

  /** Keeps a finished job's list stub text with its cold group, until the group changes (it is thawed first). */
  keepListStub(jobId: string, text: string): void {
    this.coldGroups.keepListStub(jobId, text);
  }

  /** Each job's parent and status, finished ones' from memory too (a parent's children summary). */
  *jobParents(): IterableIterator<Pick<Job, "ParentID" | "Status">> {
    yield* this.tables.jobs.hotValues();
    for (const parentId of this.coldGroups.parentIds()) yield { ParentID: parentId, Status: "dead" };
  }

  /** Brings a cold group back to memory (a write needs it); invisible to readers. */
  private thaw(group: string): void {
    if (!this.coldGroups.has(group)) return;
    // Read before it leaves the cold list: a failed read (a SQLite error, a bad row) leaves the group cold and listed.
    const stored = loadGroup(this.db, group, this.tables.versions);
    this.coldGroups.delete(group);
    if (stored.job) this.tables.jobs.warm(group, stored.job);
    for (const version of stored.versions) this.tables.versions.warm(version.JobModifyIndex, version);
    for (const alloc of stored.allocs) this.tables.allocs.warm(alloc.ID, alloc);
    for (const evaluation of stored.evals) this.tables.evals.warm(evaluation.ID, evaluation);
    this.thawed.add(group);
  }

  /** Moves the finished ones of `candidates` (job IDs) out of memory, with those thawed since the last look. */
  private freeze(candidates: Set<string>): void {
    for (const group of this.thawed) candidates.add(group);
    this.thawed.clear();
    if (candidates.size === 0 || this.keepFinishedInMemory) return;
    const groups = new Map<string, GroupInMemory>();
    for (const id of candidates) {
      const job = this.tables.jobs.hotGet(id);
      // Only a dead job's group can be finished (finishedGroup): most writes (a running alloc's update) scan nothing.
      if (job?.Status === "dead") groups.set(id, { job, versions: [], allocs: [], evals: [], deployments: [] });
    }
    if (groups.size === 0) return;
    for (const version of this.tables.versions.hotValues()) groups.get(version.ID)?.versions.push(version);
    for (const alloc of this.tables.allocs.hotValues()) groups.get(alloc.JobID)?.allocs.push(alloc);
    for (const evaluation of this.tables.evals.hotValues()) groups.get(evaluation.JobID)?.evals.push(evaluation);
    for (const deployment of this.tables.deployments.hotValues()) groups.get(deployment.JobID)?.deployments.push(deployment);
    for (const [id, group] of groups) {
      const cold = finishedGroup(group);
      if (!cold) continue;
      this.tables.jobs.freeze(id);
      for (const version of group.versions) this.tables.versions.freeze(version.JobModifyIndex);
      for (const alloc of group.allocs) {
        this.tables.allocs.freeze(alloc.ID);
        this.stubs.delete(alloc.ID);
      }
      for (const evaluation of group.evals) this.tables.evals.freeze(evaluation.ID);
      this.coldGroups.set(id, cold);
    }
  }

  /** The jobs a write touched: each may have just finished. */
  private touched(txn: WriteTxn): Set<string> {
    const ids = new Set<string>(txn.jobs.changed.keys());
    for (const alloc of txn.allocs.changed.values()) if (alloc) ids.add(alloc.JobID);
    for (const evaluation of txn.evals.changed.values()) if (evaluation) ids.add(evaluation.JobID);
    for (const deployment of txn.deployments.changed.values()) if (deployment) ids.add(deployment.JobID);
    return ids;
  }

  static open(db: ServerStateDb, options: StoreOptions = {}): StateStore {
    const keepFinishedInMemory = options.keepFinishedInMemory ?? false;
    const { index, tables, coldGroups, coldLists } = loadState(db, keepFinishedInMemory);
    return new StateStore(db, tables, coldGroups, index, options.reserve, options.clock ?? Date.now, keepFinishedInMemory, coldLists);
  }

  get index(): number {
    return this.committedIndex;
  }

  /** The committed tables. Callers must not modify what they read. */
  get read(): Readonly<StateTables> {
    return this.tables;
  }

  tableIndex(table: TableName): number {
    return this.tableIndexes[table];
  }

  nodeAllocIndex(nodeId: string): number {
    return this.nodeAllocIndexes.get(nodeId) ?? 0;
  }

  /** Calls `listener` after every commit with what it changed. */
  onCommit(listener: (txn: WriteTxn) => void): void {
    this.commitListeners.push(listener);
  }

  /** Runs `fn` as one write; see the diagram above. */
  write<T>(fn: (txn: WriteTxn) => T): T {
    const txn = new WriteTxn(this.tables, this.committedIndex + 1, this.clock() * NS_PER_MS, this.coldGroups);
    // The jobs to look at after the write; a write that fails (refused, or SQLite's error) still freezes what it thawed.
    let touched = new Set<string>();
    try {
      const result = fn(txn);
      if (!txn.isChanged) return result;
      try {
        writeWithReserve(this.reserve, () => persistChanges(this.db, txn.index, txn));
      } catch (err) {
        if (isDiskFull(err)) {
          throw new ServerError("storage-full", "the disk holding the server state is full; nothing was changed (free some space and retry)");
        }
        throw err;
      }
      this.apply(txn);
      touched = this.touched(txn);
      return result;
    } finally {
      this.freeze(touched);
    }
  }

  /**
   * Runs `fn` over a write transaction that is never committed: what a
   * write would do, for `job plan`. Nothing is persisted, applied or woken.
   */
  dryRun<T>(fn: (txn: WriteTxn) => T): T {
    try {
      return fn(new WriteTxn(this.tables, this.committedIndex + 1, this.clock() * NS_PER_MS, this.coldGroups));
    } finally {
      this.freeze(new Set());
    }
  }

  private apply(txn: WriteTxn): void {
    const events = eventsOfWrite(this.tables, txn);
    for (const table of txn.tables) {
      for (const value of table.changed.values()) if (value !== null) deepFreeze(value);
    }
    for (const [id, alloc] of txn.allocs.changed) {
      const node = alloc?.NodeID ?? this.tables.allocs.get(id)?.NodeID;
      if (node !== undefined && (alloc === null || alloc.AllocModifyIndex === txn.index)) this.nodeAllocIndexes.set(node, txn.index);
    }
    for (const [id, node] of txn.nodes.changed) {
      // A node's alloc index starts at its registration, so a watch from 0 never spins on an empty node.
      if (node !== null && !this.nodeAllocIndexes.has(id)) this.nodeAllocIndexes.set(id, txn.index);
    }
    txn.jobs.applyTo(this.tables.jobs);
    txn.versions.applyTo(this.tables.versions);
    txn.allocs.applyTo(this.tables.allocs);
    for (const id of txn.allocs.changed.keys()) this.stubs.delete(id);
    txn.evals.applyTo(this.tables.evals);
    txn.nodes.applyTo(this.tables.nodes);
    txn.deployments.applyTo(this.tables.deployments);
    txn.periodicLaunches.applyTo(this.tables.periodicLaunches);
    txn.scalingEvents.applyTo(this.tables.scalingEvents);
    txn.namespaces.applyTo(this.tables.namespaces);
    txn.nodePools.applyTo(this.tables.nodePools);
    this.committedIndex = txn.index;
    if (txn.jobs.isChanged || txn.versions.isChanged || txn.periodicLaunches.isChanged || txn.scalingEvents.isChanged) this.tableIndexes.jobs = txn.index;
    if (txn.deployments.isChanged) this.tableIndexes.deployments = txn.index;
    if (txn.allocs.isChanged) this.tableIndexes.allocs = txn.index;
    if (txn.evals.isChanged) this.tableIndexes.evals = txn.index;
    if (txn.nodes.isChanged) this.tableIndexes.nodes = txn.index;
    if (txn.namespaces.isChanged) this.tableIndexes.namespaces = txn.index;
    if (txn.nodePools.isChanged) this.tableIndexes.nodePools = txn.index;
    for (const listener of this.commitListeners) listener(txn);
    this.watch.notify();
    this.events.publish({ Index: txn.index, Events: events });
  }

  /**
   * The list stub of a committed alloc, made once per version and frozen, so
   * the API's serializer keeps its JSON text (api/json-body.ts): a list of a
   * thousand allocs re-serializes only those that changed since the last
   * one. Only the current version's stub is kept: older versions (which the
   * event buffer may still hold) keep neither stub nor text.
   */
  stub(alloc: Allocation): AllocListStub {
    const cached = this.stubs.get(alloc.ID);
    if (cached?.alloc === alloc) return cached.stub;
    const stub = Object.freeze(allocListStub(alloc));
    if (this.tables.allocs.hotGet(alloc.ID) === alloc) this.stubs.set(alloc.ID, { alloc, stub });
    return stub;
  }

  close(): void {
    this.watch.close();
    this.db.raw.close();
  }
}
