/**
 * The embedded server's state database (`<data_dir>/server/state.db`): jobs
 * and their versions, allocations, evaluations, nodes, and the Raft-like
 * index every write advances. Each row keeps its object as JSON in `body`
 * (Nomad's API shape, validated on load) beside the columns lookups need.
 * Every change of one request lands in one transaction.
 */
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Facts about the state itself: the last index handed out. */
export const serverMeta = sqliteTable("server_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/** The current version of each registered job. */
export const jobs = sqliteTable("jobs", {
  id: text("id").primaryKey(),
  /** The row of job_versions this job is now. */
  jobModifyIndex: integer("job_modify_index").notNull(),
  body: text("body").notNull(),
});

/**
 * Every kept version of every job, keyed by the index that registered it
 * (unique even when a purged job's ID is registered again), so allocations
 * can name the version they run.
 */
export const jobVersions = sqliteTable("job_versions", {
  jobModifyIndex: integer("job_modify_index").primaryKey(),
  jobId: text("job_id").notNull(),
  version: integer("version").notNull(),
  body: text("body").notNull(),
});

/** By job: a finished job's allocs are read from here alone (server/state/tiered.ts). */
export const allocations = sqliteTable(
  "allocations",
  {
    id: text("id").primaryKey(),
    nodeId: text("node_id").notNull(),
    jobId: text("job_id").notNull(),
    /** The job version (job_versions.job_modify_index) the alloc runs. */
    jobVersionKey: integer("job_version_key").notNull(),
    body: text("body").notNull(),
    /**
     * The alloc's list stub as the API answers it, so a list of finished
     * allocs (only stored, not in memory) reads small rows instead of whole
     * allocs and their job versions; null in a row an older drover wrote.
     */
    stub: text("stub"),
  },
  (table) => [index("allocations_job_id").on(table.jobId)],
);

export const evaluations = sqliteTable(
  "evaluations",
  {
    id: text("id").primaryKey(),
    jobId: text("job_id").notNull(),
    status: text("status").notNull(),
    body: text("body").notNull(),
  },
  (table) => [index("evaluations_job_id").on(table.jobId)],
);

export const nodes = sqliteTable("nodes", {
  id: text("id").primaryKey(),
  body: text("body").notNull(),
});

/** Deployments (Nomad's), newest per job served by /v1/job/:id/deployment. */
export const deployments = sqliteTable("deployments", {
  id: text("id").primaryKey(),
  jobId: text("job_id").notNull(),
  body: text("body").notNull(),
});

/** Each periodic job's last launch, so a restart neither repeats nor forgets one. */
export const periodicLaunches = sqliteTable("periodic_launches", {
  jobId: text("job_id").primaryKey(),
  body: text("body").notNull(),
});

/** Each job's scaling events per group. */
export const scalingEvents = sqliteTable("scaling_events", {
  jobId: text("job_id").primaryKey(),
  body: text("body").notNull(),
});

/**
 * ACL tokens. The secret is never stored: `secret_hash` is its SHA-256
 * (secrets are random UUIDs, so a fast hash is enough), which is how a
 * request's token is looked up. `body` is the token without its secret.
 */
export const aclTokens = sqliteTable("acl_tokens", {
  accessorId: text("accessor_id").primaryKey(),
  secretHash: text("secret_hash").notNull().unique(),
  body: text("body").notNull(),
});

/** ACL policies: their rules as written and as parsed (RulesJSON) in `body`. */
export const aclPolicies = sqliteTable("acl_policies", {
  name: text("name").primaryKey(),
  body: text("body").notNull(),
});

/** Namespaces other than the built-in "default" (or it, once changed): Nomad's Namespace as JSON. */
export const namespaces = sqliteTable("namespaces", {
  name: text("name").primaryKey(),
  body: text("body").notNull(),
});

/** Node pools other than the built-in "default" and "all": Nomad's NodePool as JSON. */
export const nodePools = sqliteTable("node_pools", {
  name: text("name").primaryKey(),
  body: text("body").notNull(),
});

/**
 * Nomad Variables, by namespace and path. `body` is the variable's metadata
 * (Nomad's VariableMetadata); its items are only ever stored in `data`,
 * encrypted (AES-256-GCM) with the keyring key `key_id`, which the agent
 * keeps in its own file, never in this database.
 */
export const variables = sqliteTable(
  "variables",
  {
    namespace: text("namespace").notNull(),
    path: text("path").notNull(),
    keyId: text("key_id").notNull(),
    /** base64 of nonce, ciphertext and tag. */
    data: text("data").notNull(),
    body: text("body").notNull(),
  },
  (table) => [primaryKey({ columns: [table.namespace, table.path] })],
);
