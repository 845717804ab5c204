/**
 * The embedded single-node server (the control plane of `drover agent`):
 * jobs and their versions, allocations placed on the local node,
 * evaluations, nodes. The HTTP routes and the in-process client endpoint
 * (client-endpoint.ts) are its only callers.
 *
 *   register(job) ─┐
 *   deregister ────┼─> one write transaction: job/version rows, reconcile,
 *   stopAlloc ─────┘   placement, evaluations, job status ──> SQLite ──> memory
 *   client updates ──> alloc rows; an alloc that finished frees room ──> blocked evals retried
 *   reads ──> memory; blocking queries wait for a table's index to pass theirs
 *
 * A crash between any two writes leaves the state of the last one: every
 * request is one SQLite transaction.
 */
import { statfsSync } from "node:fs";
import { join } from "node:path";
import { parseOrThrow } from "../lib/validation.ts";
import { jobFromApi } from "../jobspec/api-job.ts";
import { openServerState } from "../state/server/db.ts";
import { AllocClientUpdateSchema, type AllocClientUpdate, type AllocStopResponse, type JobDeregisterResponse, type JobRegisterResponse } from "../structs/api.ts";
import { isClientTerminal, type Allocation, type AllocListStub } from "../structs/alloc.ts";
import type { Evaluation } from "../structs/evaluation.ts";
import { SERVER_SET_JOB_FIELDS, type Job, type JobListStub, type JobSummary } from "../structs/job.ts";
import { NodeRegistrationSchema, type Node, type NodeListStub, type NodeRegistration, type NodeStatus } from "../structs/node.ts";
import { ServerError, invalid, notFound } from "./errors.ts";
import { collectGarbage, surplusVersions, type GcResult } from "./gc.ts";
import { evaluate, refreshJobStatus, retryBlocked, type SchedulerDeps } from "./scheduler/evaluate.ts";
import { HostPorts } from "./scheduler/host-ports.ts";
import { DESIRED } from "./scheduler/reconcile.ts";
import { StateStore, type TableName, type WriteTxn } from "./state/store.ts";
import { allocListStub, allocsOfJob, evalsOfJob, jobListStub, jobSummary } from "./status.ts";
import { VERSION } from "../version.ts";

/**
 * Free space a job register needs on the state disk. Below it the server
 * refuses new jobs (and so new allocs) while client updates for running
 * allocs still land; SQLite itself reports a full disk mid-write too.
 */
export const MIN_FREE_DISK_BYTES = 16 * 1024 * 1024;

export interface ServerOptions {
  dataDir: string;
  /** This agent's region; a job for another region is refused. */
  region: string;
  /** Ports bound on the host (default: a /proc/net snapshot refreshed in the background). */
  hostBoundPorts?: () => ReadonlySet<number>;
  /** Bytes free on the disk holding the state (default: statfs). */
  freeBytes?: () => number;
}

export interface RegisterOptions {
  /** Register only if the job's JobModifyIndex is `jobModifyIndex` (0: only if it does not exist). */
  enforceIndex?: boolean;
  jobModifyIndex?: number;
}

/** A job's fields that define what runs (not the server's bookkeeping). */
function specOf(job: Job): string {
  const copy: Partial<Job> = { ...job };
  for (const field of SERVER_SET_JOB_FIELDS) delete copy[field];
  return JSON.stringify(copy);
}

function byPrefix<T extends { ID: string }>(items: Iterable<T>, prefix: string | undefined): T[] {
  const out: T[] = [];
  for (const item of items) if (!prefix || item.ID.startsWith(prefix)) out.push(item);
  return out.sort((a, b) => a.ID.localeCompare(b.ID));
}

export class Server {
  private readonly scheduler: SchedulerDeps;
  private readonly freeBytes: () => number;
  private closed = false;

  private constructor(
    private readonly store: StateStore,
    private readonly options: ServerOptions,
  ) {
    let hostBound = options.hostBoundPorts;
    if (!hostBound) {
      const hostPorts = new HostPorts();
      void hostPorts.refresh();
      hostBound = () => hostPorts.current();
    }
    this.scheduler = { hostBoundPorts: hostBound };
    const stateDir = join(options.dataDir, "server");
    this.freeBytes = options.freeBytes ?? (() => {
      const fs = statfsSync(stateDir);
      return fs.bavail * fs.bsize;
    });
  }

  /** Opens (creating and migrating) `<data_dir>/server/state.db` and loads the state. */
  static open(options: ServerOptions): Server {
    const db = openServerState(options.dataDir);
    try {
      return new Server(StateStore.open(db), options);
    } catch (err) {
      db.raw.close();
      throw err;
    }
  }

  get index(): number {
    return this.store.index;
  }

  tableIndex(...tables: TableName[]): number {
    return Math.max(...tables.map((table) => this.store.tableIndex(table)));
  }

  /** A blocking query: resolves once any of `tables` passes `minIndex`, after `timeoutMs`, or on abort. */
  waitForTables(tables: TableName[], minIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.store.watch.wait(() => this.closed || this.tableIndex(...tables) > minIndex, timeoutMs, signal);
  }

  /** Resolves once the server changed or removed one of the node's allocs after `minIndex`, or on abort/close. */
  waitForNodeAllocs(nodeId: string, minIndex: number, signal?: AbortSignal): Promise<void> {
    // A blocking query without a deadline: the in-process client waits as long as nothing changes.
    return this.store.watch.wait(() => this.closed || this.store.nodeAllocIndex(nodeId) > minIndex, 2 ** 31 - 1, signal);
  }

  nodeAllocIndex(nodeId: string): number {
    return this.store.nodeAllocIndex(nodeId);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  // ── jobs ────────────────────────────────────────────────────────────────

  /** POST /v1/jobs: checks `raw` (API JSON), stores a new version when it changed, and schedules it. */
  registerJob(raw: unknown, options: RegisterOptions = {}): JobRegisterResponse {
    const submitted = jobFromApi(raw, { source: "job", style: "json" });
    if (submitted.Region !== this.options.region) {
      throw invalid(`job region "${submitted.Region}" is not this agent's region "${this.options.region}"`);
    }
    this.requireFreeSpace("register the job");
    return this.store.write((txn) => {
      const existing = txn.jobs.get(submitted.ID);
      if (options.enforceIndex && (existing?.JobModifyIndex ?? 0) !== (options.jobModifyIndex ?? 0)) {
        throw new ServerError(
          "conflict",
          existing
            ? `enforcing job modify index ${options.jobModifyIndex ?? 0}: job exists with conflicting job modify index ${existing.JobModifyIndex}`
            : `enforcing job modify index ${options.jobModifyIndex}: job does not exist`,
        );
      }
      let job = existing;
      if (!existing || specOf(existing) !== specOf(submitted)) {
        job = this.storeVersion(txn, submitted, existing);
      }
      const evaluation = evaluate(txn, this.scheduler, submitted.ID, "job-register");
      return {
        EvalID: evaluation.ID,
        EvalCreateIndex: txn.index,
        JobModifyIndex: job!.JobModifyIndex,
        Warnings: "",
        Index: txn.index,
      };
    });
  }

  private storeVersion(txn: WriteTxn, submitted: Job, existing: Job | undefined): Job {
    const job: Job = {
      ...submitted,
      Status: existing?.Status ?? "pending",
      StatusDescription: "",
      Version: existing ? existing.Version + 1 : 0,
      SubmitTime: txn.now,
      CreateIndex: existing?.CreateIndex ?? txn.index,
      ModifyIndex: txn.index,
      JobModifyIndex: txn.index,
    };
    txn.jobs.put(job.ID, job);
    txn.versions.put(job.JobModifyIndex, job);
    for (const key of surplusVersions(txn, job)) txn.versions.delete(key);
    return job;
  }

  /** DELETE /v1/job/:id: stops the job (a new version with Stop), or with `purge` removes it. */
  deregisterJob(id: string, purge: boolean): JobDeregisterResponse {
    return this.store.write((txn) => {
      const job = txn.jobs.get(id);
      if (!job) throw notFound(`job "${id}"`);
      let jobModifyIndex = job.JobModifyIndex;
      if (purge) txn.jobs.delete(id);
      else if (!job.Stop) jobModifyIndex = this.storeVersion(txn, { ...job, Stop: true }, job).JobModifyIndex;
      const evaluation = evaluate(txn, this.scheduler, id, "job-deregister");
      return { EvalID: evaluation.ID, EvalCreateIndex: txn.index, JobModifyIndex: jobModifyIndex, Index: txn.index };
    });
  }

  jobs(prefix?: string): JobListStub[] {
    return byPrefix(this.store.read.jobs.values(), prefix).map((job) => jobListStub(job, this.summaryOf(job)));
  }

  job(id: string): Job {
    const job = this.store.read.jobs.get(id);
    if (!job) throw notFound(`job "${id}"`);
    return job;
  }

  /** Newest first, for `job history`. */
  jobVersions(id: string): Job[] {
    const job = this.job(id);
    return [...this.store.read.versions.values()]
      .filter((version) => version.ID === id && version.CreateIndex === job.CreateIndex)
      .sort((a, b) => b.Version - a.Version);
  }

  jobAllocations(id: string): AllocListStub[] {
    return allocsOfJob(this.store.read.allocs.values(), this.job(id))
      .sort((a, b) => b.CreateIndex - a.CreateIndex)
      .map(allocListStub);
  }

  jobEvaluations(id: string): Evaluation[] {
    this.job(id);
    return evalsOfJob(this.store.read.evals.values(), id).sort((a, b) => b.CreateIndex - a.CreateIndex);
  }

  jobSummary(id: string): JobSummary {
    return this.summaryOf(this.job(id));
  }

  private summaryOf(job: Job): JobSummary {
    return jobSummary(job, allocsOfJob(this.store.read.allocs.values(), job), evalsOfJob(this.store.read.evals.values(), job.ID));
  }

  // ── allocations ─────────────────────────────────────────────────────────

  allocations(prefix?: string): AllocListStub[] {
    return byPrefix(this.store.read.allocs.values(), prefix).map(allocListStub);
  }

  allocation(id: string): Allocation {
    const alloc = this.store.read.allocs.get(id);
    if (!alloc) throw notFound(`allocation "${id}"`);
    return alloc;
  }

  /** POST /v1/allocation/:id/stop: the alloc stops and (unless its job is stopped) a replacement is placed. */
  stopAllocation(id: string): AllocStopResponse {
    return this.store.write((txn) => {
      const alloc = txn.allocs.get(id);
      if (!alloc) throw notFound(`allocation "${id}"`);
      if (alloc.DesiredStatus === "run") {
        txn.allocs.put(id, {
          ...alloc,
          DesiredStatus: "stop",
          DesiredDescription: DESIRED.stopped,
          ModifyIndex: txn.index,
          AllocModifyIndex: txn.index,
          ModifyTime: txn.now,
        });
      }
      const evaluation = evaluate(txn, this.scheduler, alloc.JobID, "alloc-stop");
      return { EvalID: evaluation.ID, Index: txn.index };
    });
  }

  evaluation(id: string): Evaluation {
    const evaluation = this.store.read.evals.get(id);
    if (!evaluation) throw notFound(`evaluation "${id}"`);
    return evaluation;
  }

  evaluations(prefix?: string): Evaluation[] {
    return byPrefix(this.store.read.evals.values(), prefix);
  }

  evaluationAllocations(id: string): AllocListStub[] {
    this.evaluation(id);
    return [...this.store.read.allocs.values()].filter((alloc) => alloc.EvalID === id).map(allocListStub);
  }

  // ── nodes and the client ────────────────────────────────────────────────

  nodes(prefix?: string): NodeListStub[] {
    return byPrefix(this.store.read.nodes.values(), prefix).map((node) => ({
      Address: node.HTTPAddr.replace(/:\d+$/, ""),
      ID: node.ID,
      Datacenter: node.Datacenter,
      Name: node.Name,
      NodeClass: node.NodeClass,
      Version: node.Attributes["drover.version"] ?? VERSION,
      Drain: node.Drain,
      SchedulingEligibility: node.SchedulingEligibility,
      Status: node.Status,
      StatusDescription: node.StatusDescription,
      Drivers: node.Drivers,
      CreateIndex: node.CreateIndex,
      ModifyIndex: node.ModifyIndex,
    }));
  }

  node(id: string): Node {
    const node = this.store.read.nodes.get(id);
    if (!node) throw notFound(`node "${id}"`);
    return node;
  }

  /** Every alloc the server has for the node, each with its job version. */
  nodeAllocations(nodeId: string): Allocation[] {
    return [...this.store.read.allocs.values()].filter((alloc) => alloc.NodeID === nodeId).sort((a, b) => a.CreateIndex - b.CreateIndex);
  }

  /** Registers or updates the client's node; room it adds is offered to blocked evaluations. */
  upsertNode(registration: NodeRegistration): { Index: number } {
    const node = parseOrThrow(NodeRegistrationSchema, registration, "node registration");
    return this.store.write((txn) => {
      const existing = txn.nodes.get(node.ID);
      txn.nodes.put(node.ID, {
        ...node,
        Drain: existing?.Drain ?? false,
        StatusUpdatedAt: existing?.Status === node.Status ? existing.StatusUpdatedAt : Math.floor(txn.now / 1e9),
        CreateIndex: existing?.CreateIndex ?? txn.index,
        ModifyIndex: txn.index,
      });
      retryBlocked(txn, this.scheduler);
      return { Index: txn.index };
    });
  }

  updateNodeStatus(nodeId: string, status: NodeStatus, description = ""): { Index: number } {
    return this.store.write((txn) => {
      const node = txn.nodes.get(nodeId);
      if (!node) throw notFound(`node "${nodeId}"`);
      if (node.Status === status && node.StatusDescription === description) return { Index: this.store.index };
      txn.nodes.put(nodeId, {
        ...node,
        Status: status,
        StatusDescription: description,
        StatusUpdatedAt: Math.floor(txn.now / 1e9),
        ModifyIndex: txn.index,
      });
      if (status === "ready") retryBlocked(txn, this.scheduler);
      return { Index: txn.index };
    });
  }

  /** The client's reports on its allocs, in one transaction; unknown allocs (already collected) are skipped. */
  updateAllocations(updates: readonly AllocClientUpdate[]): { Index: number } {
    const parsed = updates.map((update, i) => parseOrThrow(AllocClientUpdateSchema, update, `allocation update ${i}`));
    return this.store.write((txn) => {
      let freed = false;
      const jobs = new Set<string>();
      for (const update of parsed) {
        const alloc = txn.allocs.get(update.ID);
        if (!alloc) continue;
        freed ||= !isClientTerminal(alloc.ClientStatus) && isClientTerminal(update.ClientStatus);
        txn.allocs.put(alloc.ID, {
          ...alloc,
          ClientStatus: update.ClientStatus,
          ClientDescription: update.ClientDescription,
          TaskStates: update.TaskStates,
          DeploymentStatus: update.DeploymentStatus,
          ModifyIndex: txn.index,
          ModifyTime: txn.now,
        });
        jobs.add(alloc.JobID);
      }
      for (const jobId of jobs) refreshJobStatus(txn, jobId);
      if (freed) retryBlocked(txn, this.scheduler);
      return { Index: txn.index };
    });
  }

  // ── housekeeping ────────────────────────────────────────────────────────

  /** One GC pass; `force` ignores the age thresholds (PUT /v1/system/gc). */
  collectGarbage(force = false): GcResult {
    return this.store.write((txn) => collectGarbage(txn, force));
  }

  private requireFreeSpace(action: string): void {
    const free = this.freeBytes();
    if (free < MIN_FREE_DISK_BYTES) {
      const mb = (bytes: number) => `${Math.floor(bytes / (1024 * 1024))} MB`;
      throw new ServerError(
        "storage-full",
        `cannot ${action}: only ${mb(free)} free on the disk holding ${join(this.options.dataDir, "server")} ` +
          `(the server keeps ${mb(MIN_FREE_DISK_BYTES)} free for its state); nothing was changed`,
      );
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.store.close();
  }
}

