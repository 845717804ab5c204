/**
 * Moving the server's state between memory and its SQLite database: the
 * whole state is read once at start (every row checked against its schema),
 * then each write transaction's changes are written in one SQLite
 * transaction, so a crash leaves either all of a request or none of it.
 */
import { and, eq, gte, lt, sql, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import * as v from "valibot";
import { applyJobDefaults } from "../../jobspec/defaults.ts";
import { StateDbError } from "../../state/migrate.ts";
import { perDatabase } from "../../state/prepared.ts";
import { parseStoredJson } from "../../state/rows.ts";
import type { ServerStateDb } from "../../state/server/db.ts";
import { allocations, deployments, evaluations, jobs, jobVersions, namespaces, nodePools, nodes, periodicLaunches, scalingEvents, serverMeta } from "../../state/server/schema.ts";
import { parsedWithText } from "../../lib/json-text.ts";
import { allocListStub, StoredAllocationSchema, type Allocation, type AllocListStub } from "../../structs/alloc.ts";
import { DeploymentSchema, type Deployment } from "../../structs/deployment.ts";
import { EvaluationSchema, type Evaluation } from "../../structs/evaluation.ts";
import { DEFAULT_NAMESPACE, JobSchema, type Job } from "../../structs/job.ts";
import { defaultNamespace, NamespaceSchema, type Namespace } from "../../structs/namespace.ts";
import { zeroFill } from "../../structs/schema-walk.ts";
import { NodeSchema, type Node } from "../../structs/node.ts";
import { BUILT_IN_NODE_POOLS, NodePoolSchema, type NodePool } from "../../structs/node-pool.ts";
import { PeriodicLaunchSchema, type PeriodicLaunch } from "../../structs/periodic.ts";
import { JobScalingEventsSchema, type JobScalingEvents } from "../../structs/scaling.ts";
import type { TableTxn } from "./table.ts";
import { deepFreeze, TieredTable, type ColdRows } from "./tiered.ts";
import { ColdGroups } from "./cold-groups.ts";
import { finishedGroup, type GroupFacts } from "./freezer.ts";

export interface StateTables {
  /** The current version of each job (Status and indexes kept up to date). */
  jobs: TieredTable<string, Job>;
  /** Every kept job version by the JobModifyIndex that registered it. */
  versions: TieredTable<number, Job>;
  /** Allocations, each with the job version it runs (shared with `versions`). */
  allocs: TieredTable<string, Allocation>;
  evals: TieredTable<string, Evaluation>;
  nodes: TieredTable<string, Node>;
  deployments: TieredTable<string, Deployment>;
  /** Per periodic job, its last launch. */
  periodicLaunches: TieredTable<string, PeriodicLaunch>;
  /** Per job, its scaling events. */
  scalingEvents: TieredTable<string, JobScalingEvents>;
  /** Namespaces by name; "default" always. */
  namespaces: TieredTable<string, Namespace>;
  /** Node pools by name; the built-in "all" and "default" always (never stored). */
  nodePools: TieredTable<string, NodePool>;
}

/** A finished job's group as stored: what comes back to memory when a write needs it again. */
export interface StoredGroup {
  job: Job | undefined;
  versions: Job[];
  allocs: Allocation[];
  evals: Evaluation[];
}

export interface TableChanges {
  jobs: TableTxn<string, Job>;
  versions: TableTxn<number, Job>;
  allocs: TableTxn<string, Allocation>;
  evals: TableTxn<string, Evaluation>;
  nodes: TableTxn<string, Node>;
  deployments: TableTxn<string, Deployment>;
  periodicLaunches: TableTxn<string, PeriodicLaunch>;
  scalingEvents: TableTxn<string, JobScalingEvents>;
  namespaces: TableTxn<string, Namespace>;
  nodePools: TableTxn<string, NodePool>;
}

const INDEX_KEY = "index";

const parseRow = <S extends v.GenericSchema>(schema: S, body: string, what: string): v.InferOutput<S> => parseStoredJson("server", schema, body, what);

/**
 * A stored job, written by this drover or by one from before the job gained
 * fields (Nomad 1.x's blocks): a field it lacks takes Nomad's default, so
 * registering the same file again finds the same job rather than a change.
 */
const parseJobRow = (body: string, what: string): Job =>
  parseStoredJson("server", JobSchema, body, what, (value) => (isRecord(value) ? zeroFill(JobSchema, applyJobDefaults(value)) : value));

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A table whose objects all stay in memory. */
function inMemory<K, V extends object>(entries: Iterable<[K, V]> = []): TieredTable<K, V> {
  const table = new TieredTable<K, V>();
  for (const [key, value] of entries) table.set(key, value);
  return table;
}

const parseAllocRow = (row: { id: string; body: string }, job: Job): Allocation => ({ ...parseRow(StoredAllocationSchema, row.body, `allocation ${row.id}`), Job: job });

/** The job version an alloc row names (its job_version_key), which every stored alloc has. */
function versionOfAlloc(allocId: string, job: Job | undefined): Job {
  if (!job) throw new StateDbError(`server state: allocation ${allocId} names a job version that is not stored; move the server state database aside`);
  return job;
}

/**
 * A cold row read for an answer: plain JSON, not checked again. Every row was
 * checked when the server opened, and rewritten then in this version's shape
 * where it differed (loadState), so this is the object that was in memory.
 */
const trusted = <T>(body: string): T => JSON.parse(body) as T;
const trustedAlloc = (body: string, job: Job): Allocation => ({ ...trusted<Omit<Allocation, "Job">>(body), Job: job });

/** What a list or a search needs of an object: its ID and namespace. */
export interface Listed {
  ID: string;
  Namespace: string;
}

/**
 * The small rows lists and searches read of finished objects (tiered.ts
 * listed()): an alloc's stored list stub, an evaluation's own row (which
 * is its answer), IDs and namespaces, each element frozen with the text it
 * was read from, so answering it costs no second serialization.
 */
export interface ColdLists {
  allocStubs(): Iterable<[string, () => AllocListStub]>;
  evals(): Iterable<[string, () => Evaluation]>;
  /** The IDs starting with `prefix` ("" for all), with their namespaces. */
  allocIds(prefix: string): Iterable<[string, () => Listed]>;
  evalIds(prefix: string): Iterable<[string, () => Listed]>;
}

/** Above every character's UTF-8 bytes: `prefix` + this bounds the IDs that start with `prefix`. */
const LAST_CHARACTER = "\u{10FFFF}";

const idRange = (prefix: string) => ({ from: prefix, below: prefix + LAST_CHARACTER });

/** How one table's stored rows are found (prepared statements, `key` their one parameter) and read, for its ColdRows. */
interface StoredRows<K, V, Row> {
  byKey: { get(params: { key: K }): Row | undefined };
  /** Whether a row is stored under the key, reading no body. */
  hasKey: { get(params: { key: K }): unknown };
  /** One job's (group's) rows. */
  ofGroup: { all(params: { key: string }): Row[] };
  every: { all(): Row[] };
  keyOf(row: Row): K;
  /** The object a row holds: its body, unless given. */
  read?: (row: Row) => V;
  /** Makes the reader one whole scan shares (what the rows have in common, read once); `read` unless given. */
  scanReader?: () => (row: Row) => V;
  groupOf(value: V): string;
}

function coldRows<K, V, Row extends { body: string }>(rows: StoredRows<K, V, Row>): ColdRows<K, V> {
  const read = rows.read ?? ((row: Row) => trusted<V>(row.body));
  const entries = (found: Row[], reader: (row: Row) => V): [K, () => V][] => found.map((row) => [rows.keyOf(row), () => reader(row)]);
  return {
    load: (key) => {
      const row = rows.byKey.get({ key });
      return row && read(row);
    },
    has: (key) => rows.hasKey.get({ key }) !== undefined,
    scan: () => entries(rows.every.all(), rows.scanReader?.() ?? read),
    scanGroup: (group) => entries(rows.ofGroup.all({ key: group }), read),
    groupOf: rows.groupOf,
  };
}

/** The job, version, alloc and evaluation tables' cold rows (tiered.ts), read from `state` by prepared statements. */
function coldSources(state: ServerStateDb, versions: () => TieredTable<number, Job>) {
  const { db } = state;
  const key = sql.placeholder("key");
  const versionOf = (versionKey: number, id: string): Job => versionOfAlloc(id, versions().get(versionKey));
  const jobById = db.select().from(jobs).where(eq(jobs.id, key)).prepare();
  // The in-process client asks this of each finished alloc it still runs, on every watch answer: an index probe, no body read.
  const hasKey = (table: typeof jobs | typeof jobVersions | typeof allocations | typeof evaluations, column: SQLiteColumn) =>
    db.select({ found: sql<number>`1` }).from(table).where(eq(column, key)).prepare();
  const jobRows = coldRows({
    byKey: jobById,
    hasKey: hasKey(jobs, jobs.id),
    // A job is its own group.
    ofGroup: { all: (params: { key: string }) => [jobById.get(params)].flatMap((row) => (row ? [row] : [])) },
    every: db.select().from(jobs).prepare(),
    keyOf: (row) => row.id,
    groupOf: (job: Job) => job.ID,
  });
  const versionRows = coldRows({
    byKey: db.select().from(jobVersions).where(eq(jobVersions.jobModifyIndex, key)).prepare(),
    hasKey: hasKey(jobVersions, jobVersions.jobModifyIndex),
    ofGroup: db.select().from(jobVersions).where(eq(jobVersions.jobId, key)).prepare(),
    every: db.select().from(jobVersions).prepare(),
    keyOf: (row) => row.jobModifyIndex,
    groupOf: (job: Job) => job.ID,
  });
  const allocRows = coldRows({
    byKey: db.select().from(allocations).where(eq(allocations.id, key)).prepare(),
    hasKey: hasKey(allocations, allocations.id),
    ofGroup: db.select().from(allocations).where(eq(allocations.jobId, key)).prepare(),
    every: db.select().from(allocations).prepare(),
    keyOf: (row) => row.id,
    read: (row) => trustedAlloc(row.body, versionOf(row.jobVersionKey, row.id)),
    scanReader: () => {
      // The versions in one read, each parsed once (a thousand allocs of one job share it), the ones in memory reused.
      const stored = new Map(db.select({ key: jobVersions.jobModifyIndex, body: jobVersions.body }).from(jobVersions).all().map((row) => [row.key, row.body]));
      const parsed = new Map<number, Job>();
      const version = (versionKey: number, id: string): Job => {
        const known = parsed.get(versionKey) ?? versions().hotGet(versionKey);
        if (known) return known;
        const body = stored.get(versionKey);
        if (body === undefined) return versionOf(versionKey, id);
        const job = deepFreeze(trusted<Job>(body));
        parsed.set(versionKey, job);
        return job;
      };
      return (row) => trustedAlloc(row.body, version(row.jobVersionKey, row.id));
    },
    groupOf: (alloc) => alloc.JobID,
  });
  const evalRows = coldRows({
    byKey: db.select().from(evaluations).where(eq(evaluations.id, key)).prepare(),
    hasKey: hasKey(evaluations, evaluations.id),
    ofGroup: db.select().from(evaluations).where(eq(evaluations.jobId, key)).prepare(),
    every: db.select().from(evaluations).prepare(),
    keyOf: (row) => row.id,
    groupOf: (evaluation: Evaluation) => evaluation.JobID,
  });
  // A range of the ID index (SQLite compares text as bytes): only the rows whose ID starts with the prefix are read,
  // each namespace from the smallest text that has it (an alloc's stub, else its body).
  const namespaceOf = (table: typeof allocations | typeof evaluations, json: SQL) =>
    db
      .select({ id: table.id, namespace: sql<string>`json_extract(${json}, '$.Namespace')` })
      .from(table)
      .where(and(gte(table.id, sql.placeholder("from")), lt(table.id, sql.placeholder("below"))))
      .prepare();
  const allocStubRows = db.select({ id: allocations.id, stub: allocations.stub }).from(allocations).prepare();
  const evalBodies = db.select({ id: evaluations.id, body: evaluations.body }).from(evaluations).prepare();
  const allocNamespaces = namespaceOf(allocations, sql`coalesce(${allocations.stub}, ${allocations.body})`);
  const evalNamespaces = namespaceOf(evaluations, sql`${evaluations.body}`);
  const listed = (row: { id: string; namespace: string }): [string, () => Listed] => [row.id, () => ({ ID: row.id, Namespace: row.namespace })];
  const lists: ColdLists = {
    // A row an older drover wrote has no stub: made from the whole alloc.
    allocStubs: () =>
      allocStubRows.all().map((row) => [row.id, () => (row.stub === null ? Object.freeze(allocListStub(allocRows.load(row.id)!)) : parsedWithText<AllocListStub>(row.stub))]),
    evals: () => evalBodies.all().map((row) => [row.id, () => parsedWithText<Evaluation>(row.body)]),
    allocIds: (prefix) => allocNamespaces.all(idRange(prefix)).map(listed),
    evalIds: (prefix) => evalNamespaces.all(idRange(prefix)).map(listed),
  };
  return { jobRows, versionRows, allocRows, evalRows, lists };
}

/** Every stored object of job `jobId`'s group (the job itself, if stored, its versions, allocs and evaluations). */
export function loadGroup(state: ServerStateDb, jobId: string, versions: TieredTable<number, Job>): StoredGroup {
  const { db } = state;
  const row = db.select().from(jobs).where(eq(jobs.id, jobId)).get();
  const versionRows = db.select().from(jobVersions).where(eq(jobVersions.jobId, jobId)).all();
  // A cold group's versions are cold too: parsed from the rows just read, not read again one by one (versions.get).
  const groupVersions = versionRows.map((version) => versions.hotGet(version.jobModifyIndex) ?? parseJobRow(version.body, `job ${version.jobId} version ${version.version}`));
  const byKey = new Map(groupVersions.map((version) => [version.JobModifyIndex, version]));
  return {
    job: row && parseJobRow(row.body, `job ${row.id}`),
    versions: groupVersions,
    allocs: db
      .select()
      .from(allocations)
      .where(eq(allocations.jobId, jobId))
      .all()
      .map((alloc) => parseAllocRow(alloc, versionOfAlloc(alloc.id, byKey.get(alloc.jobVersionKey) ?? versions.get(alloc.jobVersionKey)))),
    evals: db
      .select()
      .from(evaluations)
      .where(eq(evaluations.jobId, jobId))
      .all()
      .map((evaluation) => parseRow(EvaluationSchema, evaluation.body, `evaluation ${evaluation.id}`)),
  };
}

/**
 * Reads the state in two passes, so a restart never holds every finished job
 * at once: the first checks every row against its schema (rewriting, in this
 * version's shape, a row an older drover wrote) and keeps only the few facts
 * that tell which jobs are finished (freezer.ts); the second loads the rest.
 * `keepFinishedInMemory` loads everything (ServerOptions.keepFinishedInMemory).
 */
export function loadState(state: ServerStateDb, keepFinishedInMemory = false): { index: number; tables: StateTables; coldGroups: ColdGroups; coldLists: ColdLists } {
  const { db } = state;
  const indexRow = db.select().from(serverMeta).where(eq(serverMeta.key, INDEX_KEY)).get();
  const sources = coldSources(state, () => tables.versions);
  const tables: StateTables = {
    jobs: new TieredTable(sources.jobRows),
    versions: new TieredTable(sources.versionRows),
    allocs: new TieredTable(sources.allocRows),
    evals: new TieredTable(sources.evalRows),
    nodes: inMemory(),
    deployments: inMemory(),
    periodicLaunches: inMemory(),
    scalingEvents: inMemory(),
    namespaces: inMemory([[DEFAULT_NAMESPACE, defaultNamespace(DEFAULT_NAMESPACE)]]),
    nodePools: inMemory(BUILT_IN_NODE_POOLS.map((pool) => [pool.Name, pool])),
  };
  for (const row of db.select().from(deployments).all()) tables.deployments.set(row.id, parseRow(DeploymentSchema, row.body, `deployment ${row.id}`));

  // Pass 1: check and reshape every row; gather each job's facts.
  const facts = new Map<string, GroupFacts>();
  const factsOf = (jobId: string) => facts.get(jobId) ?? facts.set(jobId, { job: undefined, allocs: [], evals: [], deployments: [] }).get(jobId)!;
  for (const deployment of tables.deployments.hotValues()) factsOf(deployment.JobID).deployments.push({ Status: deployment.Status });
  const reshaped: (() => void)[] = [];
  const keep = (body: string, shaped: string, rewrite: () => void) => {
    if (body !== shaped) reshaped.push(rewrite);
  };
  const stored = { versions: 0, jobs: 0, allocs: 0, evals: 0 };
  for (const row of db.select().from(jobVersions).all()) {
    const body = JSON.stringify(parseJobRow(row.body, `job ${row.jobId} version ${row.version}`));
    keep(row.body, body, () => db.update(jobVersions).set({ body }).where(eq(jobVersions.jobModifyIndex, row.jobModifyIndex)).run());
    stored.versions++;
  }
  for (const row of db.select().from(jobs).all()) {
    const job = parseJobRow(row.body, `job ${row.id}`);
    factsOf(row.id).job = { Status: job.Status, SubmitTime: job.SubmitTime, Type: job.Type, Stop: job.Stop, Namespace: job.Namespace, ParentID: job.ParentID,
      // Only the groups freezer.ts asks about (scaled ones), so pass 1 holds no whole job.
      TaskGroups: job.TaskGroups.filter((group) => group.Scaling),
    };
    const body = JSON.stringify(job);
    keep(row.body, body, () => db.update(jobs).set({ body }).where(eq(jobs.id, row.id)).run());
    stored.jobs++;
  }
  for (const row of db.select().from(allocations).all()) {
    const alloc = parseRow(StoredAllocationSchema, row.body, `allocation ${row.id}`);
    factsOf(row.jobId).allocs.push({ ClientStatus: alloc.ClientStatus, DesiredStatus: alloc.DesiredStatus, ModifyTime: alloc.ModifyTime });
    const body = JSON.stringify(alloc);
    keep(row.body, body, () => db.update(allocations).set({ body }).where(eq(allocations.id, row.id)).run());
    stored.allocs++;
  }
  for (const row of db.select().from(evaluations).all()) {
    const evaluation = parseRow(EvaluationSchema, row.body, `evaluation ${row.id}`);
    factsOf(row.jobId).evals.push({ Status: evaluation.Status, ModifyTime: evaluation.ModifyTime, CreateIndex: evaluation.CreateIndex });
    const body = JSON.stringify(evaluation);
    keep(row.body, body, () => db.update(evaluations).set({ body }).where(eq(evaluations.id, row.id)).run());
    stored.evals++;
  }
  if (reshaped.length > 0) state.raw.transaction(() => reshaped.forEach((rewrite) => rewrite()));
  const coldGroups = new ColdGroups();
  if (!keepFinishedInMemory) {
    for (const [jobId, group] of facts) {
      const cold = finishedGroup(group);
      if (cold) coldGroups.set(jobId, cold);
    }
  }

  // Pass 2: what is not finished, into memory.
  for (const row of db.select().from(jobVersions).all()) {
    if (!coldGroups.has(row.jobId)) tables.versions.set(row.jobModifyIndex, parseJobRow(row.body, `job ${row.jobId} version ${row.version}`));
  }
  for (const row of db.select().from(jobs).all()) if (!coldGroups.has(row.id)) tables.jobs.set(row.id, parseJobRow(row.body, `job ${row.id}`));
  for (const row of db.select().from(allocations).all()) {
    if (coldGroups.has(row.jobId)) continue;
    tables.allocs.set(row.id, parseAllocRow(row, versionOfAlloc(row.id, tables.versions.get(row.jobVersionKey))));
  }
  for (const row of db.select().from(evaluations).all()) {
    if (!coldGroups.has(row.jobId)) tables.evals.set(row.id, parseRow(EvaluationSchema, row.body, `evaluation ${row.id}`));
  }
  tables.versions.countCold(stored.versions);
  tables.jobs.countCold(stored.jobs);
  tables.allocs.countCold(stored.allocs);
  tables.evals.countCold(stored.evals);
  for (const row of db.select().from(nodes).all()) tables.nodes.set(row.id, parseRow(NodeSchema, row.body, `node ${row.id}`));
  for (const row of db.select().from(periodicLaunches).all()) {
    tables.periodicLaunches.set(row.jobId, parseRow(PeriodicLaunchSchema, row.body, `periodic launch of job ${row.jobId}`));
  }
  for (const row of db.select().from(scalingEvents).all()) {
    tables.scalingEvents.set(row.jobId, parseRow(JobScalingEventsSchema, row.body, `scaling events of job ${row.jobId}`));
  }
  for (const row of db.select().from(namespaces).all()) tables.namespaces.set(row.name, parseRow(NamespaceSchema, row.body, `namespace ${row.name}`));
  for (const row of db.select().from(nodePools).all()) tables.nodePools.set(row.name, parseRow(NodePoolSchema, row.body, `node pool ${row.name}`));
  return { index: indexRow ? Number(indexRow.value) : 0, tables, coldGroups, coldLists: sources.lists };
}

/** Every node an alloc names, whether the alloc is in memory or only stored. */
export function allocNodeIds(state: ServerStateDb): string[] {
  return state.db.selectDistinct({ nodeId: allocations.nodeId }).from(allocations).all().map((row) => row.nodeId);
}

/** The alloc as stored: without its job, which the version row holds. */
function allocBody(alloc: Allocation): string {
  const { Job: _job, ...stored } = alloc;
  return JSON.stringify(stored);
}

/** The writes made in every transaction (its index) and for every alloc a client reports, prepared once (state/prepared.ts). */
const writes = perDatabase(({ db }: ServerStateDb) => ({
  alloc: db
    .insert(allocations)
    .values({
      id: sql.placeholder("id"),
      nodeId: sql.placeholder("nodeId"),
      jobId: sql.placeholder("jobId"),
      jobVersionKey: sql.placeholder("jobVersionKey"),
      body: sql.placeholder("body"),
      stub: sql.placeholder("stub"),
    })
    .onConflictDoUpdate({
      target: allocations.id,
      set: {
        nodeId: sql`excluded.node_id`,
        jobId: sql`excluded.job_id`,
        jobVersionKey: sql`excluded.job_version_key`,
        body: sql`excluded.body`,
        stub: sql`excluded.stub`,
      },
    })
    .prepare(),
  meta: db
    .insert(serverMeta)
    .values({ key: sql.placeholder("key"), value: sql.placeholder("value") })
    .onConflictDoUpdate({ target: serverMeta.key, set: { value: sql`excluded.value` } })
    .prepare(),
}));

/** Each changed row of one table: `remove` for a delete (null), else `write`. */
function eachChange<K, V>(changed: ReadonlyMap<K, V | null>, remove: (key: K) => void, write: (key: K, value: V) => void): void {
  for (const [key, value] of changed) {
    if (value === null) remove(key);
    else write(key, value);
  }
}

/** Writes one transaction's changes and the new index; throws (writing nothing) on any SQLite error. */
export function persistChanges(state: ServerStateDb, index: number, changes: TableChanges): void {
  const { db, raw } = state;
  const prepared = writes(state);
  raw.transaction(() => {
    eachChange(
      changes.versions.changed,
      (key) => db.delete(jobVersions).where(eq(jobVersions.jobModifyIndex, key)).run(),
      (key, job) => db.insert(jobVersions).values({ jobModifyIndex: key, jobId: job.ID, version: job.Version, body: JSON.stringify(job) }).onConflictDoNothing().run(),
    );
    eachChange(
      changes.jobs.changed,
      (id) => db.delete(jobs).where(eq(jobs.id, id)).run(),
      (id, job) => {
        const row = { id, jobModifyIndex: job.JobModifyIndex, body: JSON.stringify(job) };
        db.insert(jobs).values(row).onConflictDoUpdate({ target: jobs.id, set: row }).run();
      },
    );
    eachChange(
      changes.allocs.changed,
      (id) => db.delete(allocations).where(eq(allocations.id, id)).run(),
      (id, alloc) => {
        prepared.alloc.run({ id, nodeId: alloc.NodeID, jobId: alloc.JobID, jobVersionKey: alloc.Job.JobModifyIndex, body: allocBody(alloc), stub: JSON.stringify(allocListStub(alloc)) });
      },
    );
    eachChange(
      changes.evals.changed,
      (id) => db.delete(evaluations).where(eq(evaluations.id, id)).run(),
      (id, evaluation) => {
        const row = { id, jobId: evaluation.JobID, status: evaluation.Status, body: JSON.stringify(evaluation) };
        db.insert(evaluations).values(row).onConflictDoUpdate({ target: evaluations.id, set: row }).run();
      },
    );
    eachChange(
      changes.nodes.changed,
      (id) => db.delete(nodes).where(eq(nodes.id, id)).run(),
      (id, node) => db.insert(nodes).values({ id, body: JSON.stringify(node) }).onConflictDoUpdate({ target: nodes.id, set: { body: JSON.stringify(node) } }).run(),
    );
    eachChange(
      changes.deployments.changed,
      (id) => db.delete(deployments).where(eq(deployments.id, id)).run(),
      (id, deployment) => {
        const row = { id, jobId: deployment.JobID, body: JSON.stringify(deployment) };
        db.insert(deployments).values(row).onConflictDoUpdate({ target: deployments.id, set: row }).run();
      },
    );
    eachChange(
      changes.periodicLaunches.changed,
      (jobId) => db.delete(periodicLaunches).where(eq(periodicLaunches.jobId, jobId)).run(),
      (jobId, launch) => db.insert(periodicLaunches).values({ jobId, body: JSON.stringify(launch) }).onConflictDoUpdate({ target: periodicLaunches.jobId, set: { body: JSON.stringify(launch) } }).run(),
    );
    eachChange(
      changes.scalingEvents.changed,
      (jobId) => db.delete(scalingEvents).where(eq(scalingEvents.jobId, jobId)).run(),
      (jobId, events) => db.insert(scalingEvents).values({ jobId, body: JSON.stringify(events) }).onConflictDoUpdate({ target: scalingEvents.jobId, set: { body: JSON.stringify(events) } }).run(),
    );
    eachChange(
      changes.namespaces.changed,
      (name) => db.delete(namespaces).where(eq(namespaces.name, name)).run(),
      (name, namespace) => db.insert(namespaces).values({ name, body: JSON.stringify(namespace) }).onConflictDoUpdate({ target: namespaces.name, set: { body: JSON.stringify(namespace) } }).run(),
    );
    eachChange(
      changes.nodePools.changed,
      (name) => db.delete(nodePools).where(eq(nodePools.name, name)).run(),
      (name, pool) => db.insert(nodePools).values({ name, body: JSON.stringify(pool) }).onConflictDoUpdate({ target: nodePools.name, set: { body: JSON.stringify(pool) } }).run(),
    );
    prepared.meta.run({ key: INDEX_KEY, value: String(index) });
  });
}
