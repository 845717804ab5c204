/**
 * What the task and alloc runners keep of their set-up hooks' progress in
 * their stores: all of it once the hooks ran (quick hooks in one write, not
 * one each), and what ran before a hook failed.
 */
import { describe, expect, test } from "bun:test";
import type { TaskHook } from "../../../src/client/taskrunner/hooks/hook.ts";
import { allocDirHook } from "../../../src/client/allocrunner/hooks/alloc-dir.ts";
import type { AllocHook } from "../../../src/client/allocrunner/hooks/hook.ts";
import type { AllocStore, TaskStore } from "../../../src/state/client/allocs.ts";
import type { AllocLocalState, TaskLocalState } from "../../../src/state/client/local-state.ts";
import { waitFor } from "../../helpers/index.ts";
import { allocRunner, job, MemoryStores, placeJob, task } from "../fixtures.ts";

/** MemoryStores that also remembers every runner-state write of each task and alloc, in order. */
class CountingStores extends MemoryStores {
  readonly localWrites: TaskLocalState[] = [];
  readonly allocLocalWrites: AllocLocalState[] = [];

  override alloc(allocId: string): AllocStore {
    const store = super.alloc(allocId);
    return {
      ...store,
      saveLocal: (local) => {
        this.allocLocalWrites.push(structuredClone(local));
        store.saveLocal(local);
      },
    };
  }

  override task(allocId: string, name: string): TaskStore {
    const store = super.task(allocId, name);
    return {
      ...store,
      saveLocal: (local) => {
        this.localWrites.push(structuredClone(local));
        store.saveLocal(local);
      },
    };
  }
}

/** A prestart hook that records its runs and answers `done`, with `data` when given. */
function quickHook(name: string, runs: string[], data?: Record<string, string>): TaskHook {
  return {
    name,
    prestart: async () => {
      runs.push(name);
      return { done: true, ...(data ? { data } : {}) };
    },
  };
}

describe("runners: set-up hooks' progress", () => {
  test("quick hooks: their progress is stored in one write, all of it, before the task runs", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    const runs: string[] = [];
    const stores = new CountingStores();
    const hooks = () => [quickHook("one", runs), quickHook("two", runs, { port: "8080" }), quickHook("three", runs)];
    const { runner } = allocRunner(alloc!, { stores, taskHooks: hooks });
    void runner.run();
    await waitFor("web running", () => runner.taskStates().web!.State === "running");

    expect(runs).toEqual(["one", "two", "three"]);
    const stored = stores.tasks.get(`${alloc!.ID}/web`)!.local!;
    expect(stored.hooks).toEqual({ one: { done: true }, two: { done: true, data: { port: "8080" } }, three: { done: true } });
    expect(stores.localWrites.filter((local) => Object.keys(local.hooks).length > 0)).toHaveLength(1);
    await runner.destroy();
  });

  test("a hook fails: what the hooks before it did is stored", async () => {
    const [alloc] = await placeJob(job([task("web", "run")]));
    const runs: string[] = [];
    const failing: TaskHook = {
      name: "fails",
      prestart: async () => {
        runs.push("fails");
        throw new Error("not yet");
      },
    };
    const { runner, stores } = allocRunner(alloc!, { taskHooks: () => [quickHook("one", runs), failing] });
    void runner.run();
    await waitFor("web dead", () => runner.taskStates().web!.State === "dead");
    expect(runs).toEqual(["one", "fails"]);
    expect(stores.tasks.get(`${alloc!.ID}/web`)!.local!.hooks).toEqual({ one: { done: true } });
    await runner.destroy();
  });

  test("alloc hooks: their progress is stored in one write before the tasks start", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    const stores = new CountingStores();
    const marker = (name: string): AllocHook => ({ name, prerun: async () => ({ done: true }) });
    const { runner, driver } = allocRunner(alloc!, { stores, allocHooks: [allocDirHook(), marker("second"), marker("third")] });
    void runner.run();
    await waitFor("web running", () => runner.taskStates().web!.State === "running");

    expect(driver.calls).toContain("start web");
    expect(stores.allocLocal.get(alloc!.ID)!.hooks).toEqual({ second: { done: true }, third: { done: true } });
    expect(stores.allocLocalWrites.filter((local) => Object.keys(local.hooks).length > 0)).toHaveLength(1);
    await runner.destroy();
  });
});
