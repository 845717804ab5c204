/**
 * The cluster as Nomad's clients ask about it: drover's cluster is this one
 * agent, the leader of its one region, with the one namespace Nomad always
 * has.
 *
 *   GET /v1/status/leader     "host:port" of the leader: this agent
 *   GET /v1/status/peers      ["host:port"]
 *   GET /v1/operator/raft/configuration   this agent as the one voting server
 *   GET /v1/regions           [this agent's region]
 *   GET /v1/namespaces        [default]
 *   GET /v1/namespace/:name   default, or 404
 */
import type { Hono } from "hono";
import type { AgentConfig } from "../../config/schema.ts";
import { DEFAULT_NAMESPACE } from "../../structs/job.ts";
import { notFound } from "../errors.ts";
import { agentAddress } from "./agent.ts";

/** Nomad's default namespace, as its API lists it. */
const DEFAULT_NAMESPACE_ENTRY = {
  Name: DEFAULT_NAMESPACE,
  Description: "Default shared namespace",
  Quota: "",
  Meta: null,
  CreateIndex: 1,
  ModifyIndex: 1,
};

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
    app.get("/v1/namespaces", (c) => c.json([DEFAULT_NAMESPACE_ENTRY]));
    app.get("/v1/namespace/:name", (c) => {
      if (c.req.param("name") !== DEFAULT_NAMESPACE) throw notFound(`namespace "${c.req.param("name")}"`);
      return c.json(DEFAULT_NAMESPACE_ENTRY);
    });
  };
}
