/**
 * The embedded single-node server (the control plane of `drover agent`):
 * jobs and their versions, allocations placed on the local node,
 * evaluations, nodes; one endpoint object per resource, as Nomad's
 * job_endpoint, alloc_endpoint, eval_endpoint and node_endpoint. The HTTP
 * routes and the in-process client endpoint (client-endpoint.ts) are its
 * only callers.
 *
 *   jobs.register ─┐
 *   jobs.deregister┼─> one write transaction: job/version rows, reconcile,
 *   allocs.stop ───┘   placement, evaluations, job status ──> SQLite ──> memory
 *   allocs.updateFromClient ──> alloc rows; an alloc that finished frees room ──> blocked evals retried
 *   reads ──> memory; blocking queries wait for a table's index to pass theirs
 *
 * A crash between any two writes leaves the state of the last one: every
 * request is one SQLite transaction.
 */
import { AclEndpoint, type TokenLifetimes } from "./acl/endpoint.ts";
import { ServiceCatalog } from "./service-catalog.ts";
import { join } from "node:path";
import type { DiskReserve } from "../state/reserve.ts";
import { openServerState } from "../state/server/db.ts";
import { freeSpaceGuard, statfsFreeBytes } from "./disk-space.ts";
import { AllocEndpoint } from "./endpoints/alloc.ts";
import { DeploymentEndpoint } from "./endpoints/deployment.ts";
import type { EndpointContext } from "./endpoints/context.ts";
import { EvalEndpoint } from "./endpoints/eval.ts";
import { JobEndpoint } from "./endpoints/job.ts";
import { NamespaceEndpoint } from "./endpoints/namespace.ts";
import { NodePoolEndpoint } from "./endpoints/node-pool.ts";
import { NodeEndpoint } from "./endpoints/node.ts";
import { FuzzySearchEndpoint } from "./endpoints/fuzzy-search.ts";
import { ScalingPolicyEndpoint } from "./endpoints/scaling-policies.ts";
import { SearchEndpoint } from "./endpoints/search.ts";
import { DueWork } from "./due-work.ts";
import { dueOfChanges, dueOfState, runDue } from "./due-sources.ts";
import type { EventBroker } from "./events/broker.ts";
import { collectGarbage, DEFAULT_GC_THRESHOLDS, type GcResult, type GcThresholds } from "./gc.ts";
import { HostPorts } from "./scheduler/host-ports.ts";
import { StateStore, type TableName } from "./state/store.ts";
import { Keyring } from "./variables/keyring.ts";
import { WorkloadIdentities } from "./identity/workload-identity.ts";
import { KeyringEndpoint } from "./variables/keyring-endpoint.ts";
import { SigningKeyUse } from "./identity/signing-keys.ts";
import { VariablesEndpoint } from "./variables/endpoint.ts";

/**
 * The in-process client's alloc watch has no deadline of its own (it waits
 * as long as nothing changes); this is setTimeout's largest delay (~24.8 days).
 */
const CLIENT_WATCH_MAX_MS = 2 ** 31 - 1;

export interface ServerOptions {
  dataDir: string;
  /** This agent's region; a job for another region is refused. */
  region: string;
  /** Ports bound on the host (default: a /proc/net snapshot refreshed in the background). */
  hostBoundPorts?: () => ReadonlySet<number>;
  /** Bytes free on the disk holding the state (default: statfs). */
  freeBytes?: () => number;
  /** The data dir's disk reserve: spent to record writes on a full disk, and no new work while it is. */
  reserve?: DiskReserve;
  /** The issuer workload identities name, for OIDC discovery (server.oidc_issuer). */
  oidcIssuer?: string;
  /** Bounds on the expiry a new ACL token may ask for (default: Nomad's, 1 minute to 24 hours). */
  aclTokenLifetimes?: TokenLifetimes;
  /** How old finished objects must be before a GC pass removes them (default: Nomad's). */
  gcThresholds?: GcThresholds;
  /** The state's clock, milliseconds since the epoch (default: Date.now); tests move it to age objects. */
  clock?: () => number;
  /** Keep finished jobs' groups in memory too, as before they moved to SQLite only (tests compare the answers). */
  keepFinishedInMemory?: boolean;
}

/** Nomad's defaults for token_min_expiration_ttl and token_max_expiration_ttl. */
export const DEFAULT_TOKEN_LIFETIMES: TokenLifetimes = { minTtlMs: 60_000, maxTtlMs: 24 * 3_600_000 };

/** Where the keyring's root keys live, under <data_dir>/server (Nomad's name). */
export const KEYSTORE_DIR = "keystore";

export class Server {
  readonly jobs: JobEndpoint;
  readonly allocs: AllocEndpoint;
  readonly evals: EvalEndpoint;
  readonly nodes: NodeEndpoint;
  readonly deployments: DeploymentEndpoint;
  readonly namespaces: NamespaceEndpoint;
  readonly nodePools: NodePoolEndpoint;
  readonly search: SearchEndpoint;
  readonly scalingPolicies: ScalingPolicyEndpoint;
  readonly fuzzySearch: FuzzySearchEndpoint;
  /** ACL tokens and policies; checked at the HTTP boundary when the agent enables ACLs. */
  readonly acl: AclEndpoint;
  /** Nomad 1.x's Variables, encrypted with the keyring in <data_dir>/server/keystore. */
  readonly variables: VariablesEndpoint;
  /**
   * Tasks' workload identities, signed with the same keyring; also the
   * resolver of every request's token (an identity, else an ACL token).
   */
  readonly identities: WorkloadIdentities;
  /** The keyring's operations: list, rotate (optionally re-encrypting every variable), remove. */
  readonly keyring: KeyringEndpoint;
  /** Drain deadlines, progress deadlines, delayed reschedules, periodic launches. */
  private readonly dueWork: DueWork;
  /** Nomad's native service catalog: instances the clients' service hooks register. */
  readonly services = new ServiceCatalog();
  private closed = false;

  private constructor(
    private readonly store: StateStore,
    private readonly options: ServerOptions,
    acl: AclEndpoint,
    keyring: Keyring,
    variables: VariablesEndpoint,
    signers: SigningKeyUse,
  ) {
    this.acl = acl;
    this.variables = variables;
    this.identities = new WorkloadIdentities(keyring, store, { region: options.region, ...(options.oidcIssuer ? { issuer: options.oidcIssuer } : {}) }, acl, signers);
    this.keyring = new KeyringEndpoint(keyring, variables, this.identities);
    let hostBound = options.hostBoundPorts;
    if (!hostBound) {
      const hostPorts = new HostPorts();
      void hostPorts.refresh();
      hostBound = () => hostPorts.current();
    }
    const stateDir = join(options.dataDir, "server");
    const scheduler = { hostBoundPorts: hostBound };
    this.dueWork = new DueWork((keys) => {
      if (!this.closed) store.write((txn) => runDue(txn, scheduler, keys));
    });
    store.onCommit((txn) => {
      for (const [key, at] of dueOfChanges(txn)) this.dueWork.set(key, at);
      this.dueWork.arm();
    });
    const ctx: EndpointContext = {
      store,
      scheduler,
      region: options.region,
      requireFreeSpace: freeSpaceGuard(stateDir, options.freeBytes ?? statfsFreeBytes(stateDir), options.reserve),
    };
    this.jobs = new JobEndpoint(ctx);
    this.allocs = new AllocEndpoint(ctx);
    this.evals = new EvalEndpoint(ctx);
    this.nodes = new NodeEndpoint(ctx);
    this.deployments = new DeploymentEndpoint(ctx);
    this.namespaces = new NamespaceEndpoint(ctx, variables.usersOfNamespace);
    this.nodePools = new NodePoolEndpoint(ctx);
    this.search = new SearchEndpoint(ctx, this.deployments);
    this.scalingPolicies = new ScalingPolicyEndpoint(ctx);
    this.fuzzySearch = new FuzzySearchEndpoint(ctx, this.scalingPolicies);
    // What fell due while the agent was down (a drain deadline, a reschedule, a launch) runs now.
    for (const [key, at] of dueOfState(store.read)) this.dueWork.set(key, at);
    this.dueWork.runDue();
  }

  /** Opens (creating and migrating) `<data_dir>/server/state.db` and loads the state. */
  static open(options: ServerOptions): Server {
    const db = openServerState(options.dataDir);
    try {
      const acl = new AclEndpoint(db, join(options.dataDir, "server"), options.aclTokenLifetimes ?? DEFAULT_TOKEN_LIFETIMES);
      const serverDir = join(options.dataDir, "server");
      const keyring = new Keyring(join(serverDir, KEYSTORE_DIR));
      return new Server(StateStore.open(db, { reserve: options.reserve, clock: options.clock, keepFinishedInMemory: options.keepFinishedInMemory }), options, acl, keyring, new VariablesEndpoint(db, keyring), new SigningKeyUse(db));
    } catch (err) {
      db.raw.close();
      throw err;
    }
  }

  /** The event stream of committed writes. */
  get events(): EventBroker {
    return this.store.events;
  }

  /** The namespace of an alloc, eval or deployment, for ACL checks by ID; undefined if there is none. */
  namespaceOf(kind: "alloc" | "evaluation" | "deployment", id: string): string | undefined {
    const { read } = this.store;
    const table = kind === "alloc" ? read.allocs : kind === "evaluation" ? read.evals : read.deployments;
    return table.get(id)?.Namespace;
  }

  /** Per table with finished groups: objects in memory and objects only in SQLite (tests; memory checks). */
  get stateTiers(): StateStore["tiers"] {
    return this.store.tiers;
  }

  /** The index of the last write. */
  get index(): number {
    return this.store.index;
  }

  tableIndex(...tables: TableName[]): number {
    return Math.max(...tables.map((table) => this.store.tableIndex(table)));
  }

  /** A blocking query: resolves once any of `tables` passes `minIndex`, after `timeoutMs`, on abort, or on close. */
  waitForTables(tables: TableName[], minIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return this.store.watch.wait(() => this.closed || this.tableIndex(...tables) > minIndex, timeoutMs, signal);
  }

  /** The last index at which the server changed or removed one of the node's allocs. */
  nodeAllocIndex(nodeId: string): number {
    return this.store.nodeAllocIndex(nodeId);
  }

  /** Resolves once nodeAllocIndex(nodeId) passes `minIndex`, on abort, or on close. */
  waitForNodeAllocs(nodeId: string, minIndex: number, signal?: AbortSignal): Promise<void> {
    return this.store.watch.wait(() => this.closed || this.store.nodeAllocIndex(nodeId) > minIndex, CLIENT_WATCH_MAX_MS, signal);
  }

  /** One GC pass; `force` ignores the age thresholds (PUT /v1/system/gc). */
  collectGarbage(force = false): GcResult {
    return this.store.write((txn) => collectGarbage(txn, force, this.options.gcThresholds ?? DEFAULT_GC_THRESHOLDS));
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Closes the state DB and wakes every blocking query. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.dueWork.stop();
    this.variables.close();
    this.store.close();
  }
}
