/**
 * The client's ClientEndpoint (structs/client-endpoint.ts) served by remote
 * Nomad servers over their RPC port, as Nomad's own client uses them
 * (client/client.go):
 *
 *   registerNode ──> Node.Register (status initializing) ──> heartbeat starts:
 *                    Node.UpdateStatus ready, then within every TTL
 *   watchAllocs  ──> Node.GetClientAllocs (blocking query: {alloc ID: AllocModifyIndex})
 *                      ──> Alloc.GetAllocs for the allocs new or changed since last pulled
 *                      ──> each read into drover's Allocation (one that cannot be read is
 *                          reported failed and left out) ──> every alloc of the node
 *   updateAllocs ──> Node.UpdateAlloc with the stripped allocs (batched by the client's AllocSync)
 *   emitNodeEvents ──> Node.EmitEvents
 *   upsertServices / deleteServices / getService ──> ServiceRegistration.Upsert / DeleteByID /
 *                    GetService: Nomad 1.3's native catalog; servers without it (0.12) answer
 *                    "can't find service", and services then go unregistered (said once in the log)
 *
 * Every call but Node.Register carries the node's SecretID as AuthToken, as
 * Nomad's clients have since 1.6 (client/client.go, client/rpc.go): servers
 * since 1.9 refuse heartbeats, alloc watches and alloc updates without it
 * (hashicorp/nomad#23838), and 0.12's ignore it on every call drover makes
 * but Alloc.GetAllocs, which reads it. Node.Register goes without: a server
 * trusts a node's first registration (it checks Node.SecretID against the
 * one it holds), and with ACLs on a 1.9 server refuses an AuthToken it cannot
 * resolve, which a node's secret is until the node is registered. The secret
 * is kept beside the node ID in the client's state dir, because a server
 * refuses a re-registration with another one.
 */
import type { Logger } from "../lib/logger.ts";
import type { Allocation } from "../structs/alloc.ts";
import type { AllocClientUpdate } from "../structs/api.ts";
import type { ClientEndpoint, NodeAllocs, NodeEvent } from "../structs/client-endpoint.ts";
import type { NodeRegistration, NodeStatus } from "../structs/node.ts";
import { ServiceRegistrationSchema, type ServiceRegistration } from "../structs/service-registration.ts";
import { NS_PER_MS } from "../lib/units.ts";
import { allocFromGo, goAllocId, goAllocUpdate } from "./go-allocs.ts";
import { goNode } from "./go-node.ts";
import { fromGo, goStrings, isoToGoTime } from "./go-values.ts";
import { Heartbeat } from "./heartbeat.ts";
import { BLOCKING_QUERY_MARGIN_MS, BLOCKING_QUERY_WAIT_MS, NomadRpc, type CallOptions } from "./rpc-client.ts";
import { ServerList } from "./servers.ts";
import { RpcError, type RpcHandler } from "./wire/net-rpc.ts";
import * as v from "valibot";

export interface NomadServersOptions {
  /** host:port of the servers' RPC ports. */
  servers: readonly string[];
  region: string;
  secretId: string;
  logger: Logger;
}

/** The one call a node makes before the servers know its secret (see above). */
const UNAUTHENTICATED = new Set(["Node.Register"]);

const Index = v.optional(v.number(), 0);
const UpdateResponseSchema = v.object({
  Index,
  HeartbeatTTL: v.optional(v.number(), 0),
  Servers: v.optional(v.array(v.object({ RPCAdvertiseAddr: v.string() })), []),
});
const ClientAllocsSchema = v.object({ Index, Allocs: v.record(v.string(), v.number()) });
const WriteResponseSchema = v.object({ Index });
const ServicesSchema = v.object({ Services: v.array(ServiceRegistrationSchema) });

/** net/rpc's answer for a service the server does not have (ServiceRegistration before Nomad 1.3). */
function isMissingService(err: unknown): boolean {
  return err instanceof RpcError && err.message.includes("can't find service");
}

/** A reply read with Go's zero values filled in, or an error naming the call. */
function readReply<S extends v.GenericSchema>(schema: S, reply: unknown, method: string): v.InferOutput<S> {
  const result = v.safeParse(schema, fromGo(schema, reply));
  if (!result.success) throw new Error(`${method}: unexpected reply from the Nomad server: ${result.issues[0]?.message}`);
  return result.output;
}

export class NomadServersEndpoint implements ClientEndpoint {
  private readonly rpc: NomadRpc;
  private readonly heartbeat: Heartbeat;
  private registration: NodeRegistration | undefined;
  /** The newest version pulled of each of the node's allocs. */
  private readonly pulled = new Map<string, Allocation>();
  /** Allocs that could not be read into drover's shape: reported failed once (per version), then left alone. */
  private readonly refused = new Map<string, number>();
  /** Set once a server said it has no ServiceRegistration endpoint. */
  private noCatalog = false;
  /**
   * Set once Node.GetClientAllocs has answered: the first read is a
   * consistent one (the leader's), so a restarted node never acts on a
   * stale follower's view that predates its own state; later reads may be
   * stale, as Nomad's client (1.6+) does it.
   */
  private readAllocsOnce = false;
  /** Node.UpdateAlloc calls go one after another, so a report never overtakes a newer one. */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: NomadServersOptions) {
    this.rpc = new NomadRpc(new ServerList(options.servers), options.logger);
    this.heartbeat = new Heartbeat(
      {
        beat: () => this.beat(),
        register: async () => {
          if (this.registration) await this.register(this.registration);
        },
      },
      options.logger,
    );
  }

  get servers(): readonly string[] {
    return this.rpc.servers.all();
  }

  async registerNode(node: NodeRegistration): Promise<{ Index: number }> {
    this.registration = node;
    const index = await this.register(node);
    this.heartbeat.start();
    return { Index: index };
  }

  async updateNodeStatus(nodeId: string, status: NodeStatus): Promise<{ Index: number }> {
    return { Index: (await this.updateStatus(nodeId, status)).Index };
  }

  async watchAllocs(nodeId: string, minIndex: number, signal?: AbortSignal): Promise<NodeAllocs> {
    const reply = await this.blockingCall("Node.GetClientAllocs", { NodeID: nodeId, SecretID: this.options.secretId }, minIndex, signal, this.readAllocsOnce);
    this.readAllocsOnce = true;
    const { Index: index, Allocs: current } = readReply(ClientAllocsSchema, reply, "Node.GetClientAllocs");
    const pull = Object.entries(current)
      .filter(([id, modifyIndex]) => (this.pulled.get(id)?.AllocModifyIndex ?? -1) < modifyIndex && (this.refused.get(id) ?? -1) < modifyIndex)
      .map(([id]) => id);
    if (pull.length > 0) await this.pull(pull, Math.max(...pull.map((id) => current[id]!)), signal);
    for (const id of this.pulled.keys()) {
      if (id in current) continue;
      this.pulled.delete(id);
    }
    for (const id of this.refused.keys()) if (!(id in current)) this.refused.delete(id);
    const allocs = Object.keys(current)
      .map((id) => this.pulled.get(id))
      .filter((alloc): alloc is Allocation => alloc !== undefined)
      .sort((a, b) => a.CreateIndex - b.CreateIndex);
    return { index, allocs };
  }

  async updateAllocs(updates: readonly AllocClientUpdate[]): Promise<{ Index: number }> {
    const nodeId = this.registration?.ID ?? "";
    const args = { Alloc: updates.map((update) => goAllocUpdate(update, nodeId)) };
    const sent = this.writes.then(() => this.call("Node.UpdateAlloc", args));
    this.writes = sent.catch(() => undefined);
    return { Index: readReply(WriteResponseSchema, await sent, "Node.UpdateAlloc").Index };
  }

  async emitNodeEvents(nodeId: string, events: readonly NodeEvent[]): Promise<{ Index: number }> {
    if (events.length === 0) return { Index: 0 };
    const goEvents = events.map((event) => ({
      Message: event.Message,
      Subsystem: event.Subsystem,
      Details: event.Details,
      Timestamp: isoToGoTime(new Date(event.Time / NS_PER_MS).toISOString()),
    }));
    const reply = await this.call("Node.EmitEvents", { NodeEvents: { [nodeId]: goEvents } });
    return { Index: readReply(WriteResponseSchema, reply, "Node.EmitEvents").Index };
  }

  async upsertServices(registrations: readonly Omit<ServiceRegistration, "CreateIndex" | "ModifyIndex">[]): Promise<void> {
    if (registrations.length === 0) return;
    await this.catalog(async () => void (await this.call("ServiceRegistration.Upsert", { Services: registrations })), undefined);
  }

  async deleteServices(ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.catalog(async () => void (await this.call("ServiceRegistration.DeleteByID", { ID: id })), undefined);
  }

  async getService(name: string, namespace: string): Promise<ServiceRegistration[]> {
    return this.catalog(
      async () => readReply(ServicesSchema, await this.call("ServiceRegistration.GetService", { ServiceName: name, Namespace: namespace }), "ServiceRegistration.GetService").Services,
      [],
    );
  }

  /** A catalog call, or `fallback` (said once) where the servers have no native catalog. */
  private async catalog<T>(call: () => Promise<T>, fallback: T): Promise<T> {
    if (this.noCatalog) return fallback;
    try {
      return await call();
    } catch (err) {
      if (!isMissingService(err)) throw err;
      this.noCatalog = true;
      this.options.logger.warn("the Nomad servers have no native service catalog (it came in Nomad 1.3): task services are not registered");
      return fallback;
    }
  }

  /** Serves the client RPCs servers forward to this node (client-rpcs.ts). */
  serveClientRpcs(handler: RpcHandler): void {
    this.rpc.handler = handler;
  }

  /** Stops the heartbeat and closes the connections; the node goes down on the servers once its TTL passes. */
  async close(): Promise<void> {
    await this.heartbeat.stop();
    this.rpc.close();
  }

  private call(method: string, args: Record<string, unknown>, options?: CallOptions): Promise<unknown> {
    const auth = UNAUTHENTICATED.has(method) ? {} : { AuthToken: this.options.secretId };
    return this.rpc.call(method, { ...args, ...auth, Region: this.options.region }, options);
  }

  /** A blocking query: answered once the server's data passes `minIndex`, or after its wait, stale reads allowed unless `allowStale` is false. */
  private blockingCall(method: string, args: Record<string, unknown>, minIndex: number, signal: AbortSignal | undefined, allowStale = true): Promise<unknown> {
    return this.call(
      method,
      { ...args, MinQueryIndex: minIndex, MaxQueryTime: BLOCKING_QUERY_WAIT_MS * NS_PER_MS, AllowStale: allowStale },
      { signal, timeoutMs: BLOCKING_QUERY_WAIT_MS + BLOCKING_QUERY_MARGIN_MS },
    );
  }

  private async updateStatus(nodeId: string, status: NodeStatus): Promise<v.InferOutput<typeof UpdateResponseSchema>> {
    return readReply(UpdateResponseSchema, await this.call("Node.UpdateStatus", { NodeID: nodeId, Status: status }), "Node.UpdateStatus");
  }

  private async register(node: NodeRegistration): Promise<number> {
    const reply = readReply(UpdateResponseSchema, await this.call("Node.Register", { Node: goNode(node, this.options.secretId) }), "Node.Register");
    this.options.logger.info({ node_id: node.ID, servers: this.servers }, "node registered with the Nomad servers");
    return reply.Index;
  }

  /** Node.UpdateStatus "ready": the TTL in ms, and the region's servers for failover. */
  private async beat(): Promise<number> {
    const nodeId = this.registration?.ID;
    if (!nodeId) throw new Error("the node is not registered yet");
    const reply = await this.updateStatus(nodeId, "ready");
    this.rpc.servers.update(reply.Servers.map((server) => server.RPCAdvertiseAddr));
    return reply.HeartbeatTTL / NS_PER_MS;
  }

  private async pull(ids: string[], maxIndex: number, signal?: AbortSignal): Promise<void> {
    // One below the newest index wanted: a stale server waits until it has caught up.
    const reply = await this.blockingCall("Alloc.GetAllocs", { AllocIDs: ids }, maxIndex - 1, signal);
    const raw = (reply as { Allocs?: unknown }).Allocs;
    const got = Array.isArray(raw) ? raw : [];
    for (const item of got) {
      try {
        const alloc = allocFromGo(item);
        this.pulled.set(alloc.ID, alloc);
      } catch (err) {
        this.refuse(goAllocId(item), item, (err as Error).message);
      }
    }
    const missing = ids.filter((id) => !this.pulled.has(id) && !this.refused.has(id));
    if (missing.length > 0) throw new Error(`Alloc.GetAllocs did not return ${missing.length} of the node's allocs yet`);
  }

  /** An alloc that cannot be read: it fails at once, with the reason, as Nomad's client fails one it cannot start. */
  private refuse(id: string, raw: unknown, reason: string): void {
    const modifyIndex = Number(goStrings((raw as { AllocModifyIndex?: unknown }).AllocModifyIndex) ?? 0);
    this.refused.set(id, modifyIndex);
    this.options.logger.error({ alloc_id: id, reason }, "refusing alloc from the Nomad server");
    void this.updateAllocs([{ ID: id, ClientStatus: "failed", ClientDescription: reason }]).catch((err: unknown) =>
      this.options.logger.warn({ alloc_id: id, err: String(err) }, "reporting a refused alloc failed"),
    );
  }
}
