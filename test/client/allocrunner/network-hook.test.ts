/** The network hook where bridge networks cannot be built, and for groups that do not ask for one. */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { networkHook } from "../../../src/client/allocrunner/hooks/network.ts";
import type { AllocHookContext } from "../../../src/client/allocrunner/hooks/hook.ts";
import type { Allocation } from "../../../src/structs/alloc.ts";

function context(mode: string): { ctx: AllocHookContext; saved: unknown[] } {
  const saved: unknown[] = [];
  const alloc = { ID: "a1", AllocatedResources: { Shared: { Ports: [], Networks: [{ Mode: mode }] } } } as unknown as Allocation;
  const ctx = { alloc, network: { get: () => undefined, set: (record: unknown) => saved.push(record) } } as unknown as AllocHookContext;
  return { ctx, saved };
}

describe("the network hook", () => {
  const hook = networkHook({ bridge: null, unavailable: "the kernel has no bridge module loaded (modprobe bridge)", logger: pino({ level: "silent" }) });

  test("a bridge group on a host without bridge support fails its setup, saying why", async () => {
    const { ctx, saved } = context("bridge");
    await expect(hook.prerun!(ctx)).rejects.toThrow('network mode "bridge" is not available on this client: the kernel has no bridge module loaded (modprobe bridge)');
    expect(saved).toEqual([]);
  });

  test("host and none groups: nothing made, nothing saved", async () => {
    for (const mode of ["host", "none"]) {
      const { ctx, saved } = context(mode);
      await hook.prerun!(ctx);
      await hook.postrun!(ctx);
      expect(saved).toEqual([]);
    }
  });
});
