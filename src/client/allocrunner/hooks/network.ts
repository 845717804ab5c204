/**
 * The group's bridge network (Nomad's network hook): made before any task
 * starts, removed once every task is dead. What was made is saved in the
 * alloc's local state before and after the CNI ADD, so an agent killed at any
 * point leaves a record the next one tears down (client/network/bridge.ts).
 *
 *   prerun:   mode bridge? ─ no ─> nothing
 *               │ saved and its namespace still there (agent restarted): kept, the tasks still use it
 *               │ saved but the namespace gone (reboot, half-done setup): torn down, then made again
 *               ▼
 *             plan saved ─> netns + CNI ADD ─> result saved
 *   postrun / destroy: CNI DEL with the saved result ─> netns removed ─> record dropped
 */
import { existsSync } from "node:fs";
import * as v from "valibot";
import type { Logger } from "../../../lib/logger.ts";
import { AllocNetworkSchema, type AllocNetwork, type BridgeNetwork } from "../../network/bridge.ts";
import type { AllocHook, AllocHookContext } from "./hook.ts";

export interface NetworkHookDeps {
  /** Null: bridge mode cannot work on this host, for `unavailable`'s reason. */
  bridge: BridgeNetwork | null;
  unavailable: string | null;
  logger: Logger;
}

function saved(ctx: AllocHookContext): AllocNetwork | undefined {
  const stored = ctx.network.networkRecord();
  if (stored === undefined) return undefined;
  const parsed = v.safeParse(AllocNetworkSchema, stored);
  return parsed.success ? parsed.output : undefined;
}

export function networkHook(deps: NetworkHookDeps): AllocHook {
  const teardown = async (ctx: AllocHookContext) => {
    const network = saved(ctx);
    if (!network || !deps.bridge) return;
    await deps.bridge.teardown(ctx.alloc.ID, network);
    ctx.network.recordNetwork(undefined);
    deps.logger.info({ alloc_id: ctx.alloc.ID }, "removed the alloc's bridge network");
  };
  return {
    name: "network",
    async prerun(ctx) {
      if (ctx.alloc.AllocatedResources.Shared.Networks[0]?.Mode !== "bridge") return;
      if (!deps.bridge) throw new Error(`network mode "bridge" is not available on this client: ${deps.unavailable}`);
      const previous = saved(ctx);
      if (previous?.result && existsSync(previous.netns)) return;
      if (previous) await deps.bridge.teardown(ctx.alloc.ID, previous).catch((err: unknown) => deps.logger.warn({ err, alloc_id: ctx.alloc.ID }, "removing a half-made bridge network failed"));
      const plan = deps.bridge.plan(ctx.alloc);
      ctx.network.recordNetwork(plan);
      const network = await deps.bridge.setup(ctx.alloc.ID, plan);
      ctx.network.recordNetwork(network);
      deps.logger.info({ alloc_id: ctx.alloc.ID, address: network.address }, "attached the alloc to the bridge network");
    },
    postrun: teardown,
    destroy: teardown,
  };
}
