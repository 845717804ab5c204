/**
 * The cluster as Nomad's clients ask about it: drover's cluster is this one
 * agent, the leader of its one region (namespaces: namespaces.ts).
 *
 *   GET /v1/status/leader     "host:port" of the leader: this agent
 *   GET /v1/status/peers      ["host:port"]
 *   GET /v1/operator/raft/configuration   this agent as the one voting server
 *   GET /v1/regions           [this agent's region]
 */
import type { Hono } from "hono";
import type { AgentConfig } from "../../config/schema.ts";
import { agentAddress } from "./agent.ts";

export function clusterRoutes(config: () => AgentConfig, nodeName: string, index: () => number) {
  return (app: Hono) => {
    const leader = () => {
      const { host, port } = agentAddress(config());
      return `${host}:${port}`;
    };
    app.get("/v1/status/leader", (c) => c.json(leader()));
    app.get("/v1/status/peers", (c) => c.json([leader()]));
    app.get("/v1/operator/raft/configuration", (c) =>
      c.json({
        Servers: [{ ID: leader(), Node: `${nodeName}.${config().region}`, Address: leader(), Leader: true, Voter: true, RaftProtocol: "3" }],
        Index: index(),
      }),
    );
    app.get("/v1/regions", (c) => c.json([config().region]));
  };
}
