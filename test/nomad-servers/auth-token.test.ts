/**
 * The client dialect of Nomad 1.6+, decoded from what drover's endpoint sends
 * to a real Nomad 0.12.12 server through a recording proxy, with the
 * server's ACLs off and on: every call but Node.Register carries the node's
 * SecretID as AuthToken (Nomad >= 1.9 refuses heartbeats, alloc watches and
 * alloc updates without it), the node registers in its node pool, and 0.12
 * accepts all of it: the node turns ready, its alloc is pulled and reported
 * running.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { NomadServersEndpoint } from "../../src/nomad-servers/endpoint.ts";
import { silentLogger } from "../client/fixtures.ts";
import { waitFor } from "../helpers/index.ts";
import { nomadServer, type NomadAgent } from "../helpers/nomad-agents.ts";
import { NOMAD_BINARY } from "../helpers/nomad.ts";
import { rpcRecorder } from "../helpers/rpc-recorder.ts";
import { testNode } from "../server/fixtures.ts";

const skip = !NOMAD_BINARY;

/**
 * Each call the endpoint makes to a 0.12 server in the flow below: its args'
 * top-level keys (Go's field names, embedded QueryOptions/WriteRequest
 * flattened), and the check a Nomad 1.9 server applies to it (nomad/*_endpoint.go
 * at v1.9.7; checked against the source only, no 1.x binary runs here).
 */
const CONFORMANCE: Record<string, { keys: string[]; server19: string }> = {
  "Node.Register": { keys: ["Node", "Region"], server19: "trust on first use: Node.SecretID must match the one the server holds" },
  "Node.UpdateStatus": {
    keys: ["AuthToken", "NodeID", "Region", "Status"],
    server19: "Authenticate, then ResolveACL: AllowClientOp (the node's secret) or AllowServerOp, else Permission denied",
  },
  "Node.GetClientAllocs": {
    keys: ["AllowStale", "AuthToken", "MaxQueryTime", "MinQueryIndex", "NodeID", "Region", "SecretID"],
    server19: "Authenticate, else Permission denied; SecretID must be the node's",
  },
  "Alloc.GetAllocs": {
    keys: ["AllocIDs", "AllowStale", "AuthToken", "MaxQueryTime", "MinQueryIndex", "Region"],
    server19: "AuthenticateClientOnly: the AuthToken must be a node's secret",
  },
  "Node.UpdateAlloc": { keys: ["Alloc", "AuthToken", "Region"], server19: "AuthenticateClientOnly, AllowClientOp" },
  "Node.EmitEvents": { keys: ["AuthToken", "NodeEvents", "Region"], server19: "AuthenticateClientOnly, AllowClientOp" },
  "ServiceRegistration.DeleteByID": { keys: ["AuthToken", "ID", "Region"], server19: "Authenticate, then ResolveACL: a client, or submit-job on the namespace" },
};
const CALL_KINDS = Object.keys(CONFORMANCE);

interface Cluster {
  server: NomadAgent;
  /** The management token when ACLs are on. */
  token: string;
}

// Made at the top level: their clean-up is registered for the file's end.
const clusters: Record<"off" | "on", Cluster> | undefined = skip
  ? undefined
  : { off: { server: await nomadServer(), token: "" }, on: { server: await nomadServer({ acl: true }), token: "" } };

async function api<T>(cluster: Cluster, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = cluster.token ? { "X-Nomad-Token": cluster.token } : {};
  const response = await fetch(`${cluster.server.http}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

function job(id: string, nodeId: string): unknown {
  return {
    Job: {
      ID: id,
      Name: id,
      Type: "service",
      Datacenters: ["dc1"],
      Constraints: [{ LTarget: "${node.unique.id}", RTarget: nodeId, Operand: "=" }],
      TaskGroups: [
        {
          Name: "g",
          Count: 1,
          Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/true" }, Resources: { CPU: 20, MemoryMB: 16 } }],
        },
      ],
    },
  };
}

describe.skipIf(skip).each(["off", "on"] as const)("a drover node of a Nomad 0.12.12 server with ACLs %s", (acl) => {
  const cluster = clusters?.[acl] as Cluster;
  const secretId = randomUUID();
  const node = testNode({ Name: `auth-${acl}` });
  const jobId = `auth-token-${acl}-${process.pid}`;
  let endpoint: NomadServersEndpoint | undefined;
  afterAll(() => endpoint?.close());

  test(
    "sends the node's SecretID as AuthToken on every call but Node.Register, and the server accepts them",
    async () => {
      await cluster.server.start();
      if (acl === "on") cluster.token = (await api<{ SecretID: string }>(cluster, "POST", "/v1/acl/bootstrap")).SecretID;
      const recorder = await rpcRecorder(cluster.server.rpc);
      endpoint = new NomadServersEndpoint({ servers: [recorder.address], region: "global", secretId, logger: silentLogger });
      const client = endpoint;

      await client.registerNode(node);
      await waitFor(`node ${node.ID} ready`, async () => (await api<{ Status: string }>(cluster, "GET", `/v1/node/${node.ID}`)).Status === "ready", { timeoutMs: 30_000 });
      await api(cluster, "PUT", "/v1/jobs", job(jobId, node.ID));
      const alloc = await waitFor("the job's alloc pulled by the node", async () => (await client.watchAllocs(node.ID, 0)).allocs.find((a) => a.JobID === jobId), {
        timeoutMs: 30_000,
        intervalMs: 200,
      });
      await client.updateAllocs([{ ID: alloc.ID, ClientStatus: "running" }]);
      // A watch after the first: it may be answered by any server.
      await client.watchAllocs(node.ID, 0);
      await client.emitNodeEvents(node.ID, [{ Message: "checked", Subsystem: "Cluster", Details: {}, Time: Date.now() * 1e6 }]);
      // 0.12 has no service catalog: the call is answered "can't find service" and the node carries on.
      await client.deleteServices(["_nomad-task-x"]);
      await waitFor("the server shows the alloc running", async () => (await api<{ ClientStatus: string }>(cluster, "GET", `/v1/allocation/${alloc.ID}`)).ClientStatus === "running", {
        timeoutMs: 30_000,
      });

      const calls = recorder.calls;
      expect([...new Set(calls.map((call) => call.method))].sort()).toEqual([...CALL_KINDS].sort());
      for (const kind of CALL_KINDS) {
        const tokens = calls.filter((call) => call.method === kind).map((call) => call.args.AuthToken);
        expect({ kind, tokens: [...new Set(tokens)] }).toEqual({ kind, tokens: [kind === "Node.Register" ? undefined : secretId] });
      }
      for (const call of calls) {
        expect({ method: call.method, keys: Object.keys(call.args).sort() }).toEqual({ method: call.method, keys: CONFORMANCE[call.method]!.keys });
      }
      // The first alloc watch is a consistent read; later ones may be served by a follower.
      const watches = calls.filter((call) => call.method === "Node.GetClientAllocs").map((call) => call.args.AllowStale);
      expect(watches.length).toBeGreaterThan(1);
      expect(watches).toEqual([false, ...watches.slice(1).map(() => true)]);
      const registration = calls.find((call) => call.method === "Node.Register")!.args.Node as Record<string, unknown>;
      expect(registration.NodePool).toBe("default");
      // What a 1.7+ server builds the node's CPU topology from (structs.Compatibility): its compute and core count.
      expect((registration.NodeResources as { Cpu: unknown }).Cpu).toEqual({ CpuShares: node.NodeResources.Cpu.CpuShares, TotalCpuCores: node.NodeResources.Cpu.TotalCpuCores });
      expect((registration.Attributes as Record<string, string>)["nomad.service_discovery"]).toBe("true");
      await api(cluster, "DELETE", `/v1/job/${jobId}?purge=true`);
    },
    90_000,
  );
});
