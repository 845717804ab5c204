/** The node a node command means: the agent's own with -self, else the ID (or prefix) given. */
import { UsageError } from "../flags.ts";
import type { AgentClient } from "../http-client.ts";
import { resolveNode } from "../prefix.ts";

/** The full ID of the node: -self (the agent's own), else the one argument. */
export async function targetNode(client: AgentClient, self: boolean, args: string[]): Promise<string> {
  if (self) {
    if (args.length > 0) throw new UsageError("give a node ID or -self, not both");
    const { body } = await client.get<{ stats?: { client?: { node_id?: string } } }>("/v1/agent/self");
    const id = body.stats?.client?.node_id;
    if (!id) throw new UsageError("-self needs an agent that runs a client");
    return id;
  }
  if (args.length !== 1) throw new UsageError(`expected one node ID, got ${args.length} argument(s)`);
  return (await resolveNode(client, args[0]!)).ID;
}
