/**
 * Lifecycle ordering and group behaviour of the alloc runner, over the fake
 * driver: what starts before what, who kills whom, and the status reported.
 */
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { TASK_EVENT } from "../../../src/structs/task-state.ts";
import { allocDirHook } from "../../../src/client/allocrunner/hooks/alloc-dir.ts";
import { previousAllocHook } from "../../../src/client/allocrunner/hooks/previous-alloc.ts";
import type { TaskHook } from "../../../src/client/taskrunner/hooks/hook.ts";
import { logmonHook } from "../../../src/client/taskrunner/hooks/logmon.ts";
import { waitFor } from "../../helpers/index.ts";
import { allocRunner, job, MemoryStores, placeJob, task } from "../fixtures.ts";

const order = (calls: string[], call: string) => {
  const index = calls.indexOf(call);
  if (index < 0) throw new Error(`"${call}" never happened; calls: ${calls.join(", ")}`);
  return index;
};

describe("alloc runner lifecycle", () => {
  test("prestart runs to completion first, sidecars start before main, poststart after main runs, poststop last", async () => {
    const [alloc] = await placeJob(
      job([
        task("init", "exit:0:30", 'lifecycle {\n hook = "prestart"\n }'),
        task("proxy", "run", 'lifecycle {\n hook = "prestart"\n sidecar = true\n }'),
        task("web", "exit:0:80"),
        task("announce", "exit:0", 'lifecycle {\n hook = "poststart"\n }'),
        task("cleanup", "exit:0", 'lifecycle {\n hook = "poststop"\n }'),
      ]),
    );
    const { runner, driver, reports } = allocRunner(alloc!);
    await runner.run();
    const calls = driver.calls;
    expect(order(calls, "start init")).toBeLessThan(order(calls, "start web"));
    expect(order(calls, "start proxy")).toBeLessThan(order(calls, "start web"));
    expect(order(calls, "start web")).toBeLessThan(order(calls, "start announce"));
    expect(order(calls, "stop proxy SIGINT")).toBeLessThan(order(calls, "start cleanup"));
    expect(runner.taskStates().proxy!.Events.map((e) => e.Type)).toContain(TASK_EVENT.MainDead);
    expect(runner.status().status).toBe("complete");
    expect(reports.at(-1)!.ClientStatus).toBe("complete");
  });

  test("a prestart task that fails for good fails the alloc; main tasks never start", async () => {
    const [alloc] = await placeJob(job([task("init", "exit:3", 'lifecycle {\n hook = "prestart"\n }'), task("web", "run")]));
    const { runner, driver } = allocRunner(alloc!);
    await runner.run();
    expect(driver.calls).not.toContain("start web");
    expect(runner.taskStates().init).toMatchObject({ State: "dead", Failed: true });
    expect(runner.taskStates().web!.State).toBe("dead");
    expect(runner.status().status).toBe("failed");
  });

  test("when the leader ends, the others are killed with Leader Task Dead", async () => {
    const [alloc] = await placeJob(job([task("main", "exit:0:40", "leader = true"), task("helper", "run")]));
    const { runner } = allocRunner(alloc!);
    await runner.run();
    const helper = runner.taskStates().helper!;
    expect(helper.State).toBe("dead");
    expect(helper.Events.map((e) => e.Type)).toEqual(
      expect.arrayContaining([TASK_EVENT.LeaderDead, TASK_EVENT.Terminated, TASK_EVENT.Killed]),
    );
    expect(runner.status().status).toBe("complete");
  });

  test("a task that fails for good kills its siblings (Sibling Task Failed) and fails the alloc", async () => {
    const [alloc] = await placeJob(job([task("bad", "exit:1:20"), task("good", "run")], { type: "service" }));
    const { runner } = allocRunner(alloc!);
    await runner.run();
    const good = runner.taskStates().good!;
    const sibling = good.Events.find((e) => e.Type === TASK_EVENT.SiblingFailed);
    expect(sibling?.FailedSibling).toBe("bad");
    expect(good).toMatchObject({ State: "dead", Failed: false });
    expect(runner.taskStates().bad).toMatchObject({ State: "dead", Failed: true });
    expect(runner.status().status).toBe("failed");
  });

  test("an alloc whose setup fails: no task starts, each is dead and failed with the reason, the alloc fails", async () => {
    const [alloc] = await placeJob(job([task("web", "run"), task("cleanup", "exit:0", 'lifecycle {\n hook = "poststop"\n }')], { type: "service" }));
    const broken = {
      name: "alloc_dir",
      async prerun(): Promise<void> {
        throw new Error("no space left on device");
      },
    };
    const { runner, driver, reports } = allocRunner(alloc!, { allocHooks: [broken] });
    await runner.run();
    expect(driver.calls.filter((c) => c.startsWith("start"))).toEqual([]);
    for (const state of Object.values(runner.taskStates())) {
      expect(state).toMatchObject({ State: "dead", Failed: true });
      expect(state.Events.find((e) => e.Type === TASK_EVENT.SetupFailure)?.SetupError).toBe(
        "failed to setup alloc: alloc_dir: no space left on device",
      );
    }
    expect(reports.at(-1)!.ClientStatus).toBe("failed");
  });

  test("stopped while it waits for the alloc it replaces: the wait ends, nothing starts, destroy finishes", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    const replacing = { ...alloc!, PreviousAllocation: "the-old-alloc" };
    let waiting = false;
    // The old alloc never ends (its stop never came).
    const previous = { waitTerminal: () => ((waiting = true), new Promise<never>(() => {})) };
    const { runner, driver } = allocRunner(replacing, { allocHooks: [allocDirHook(), previousAllocHook(previous)] });
    const done = runner.run();
    await waitFor("waiting for the old alloc", () => waiting);
    await runner.destroy();
    await done;
    expect(driver.calls).toEqual([]);
    expect(runner.taskStates().web!.State).toBe("dead");
  });

  test("stop is an update: every task is killed, poststop still runs, the alloc completes", async () => {
    const [alloc] = await placeJob(job([task("web", "run"), task("cleanup", "exit:0", 'lifecycle {\n hook = "poststop"\n }')], { type: "service" }));
    const { runner, driver } = allocRunner(alloc!);
    const done = runner.run();
    await waitFor("web running", () => runner.taskStates().web!.State === "running");
    await runner.update({ ...alloc!, DesiredStatus: "stop", AllocModifyIndex: alloc!.AllocModifyIndex + 1 });
    await done;
    expect(order(driver.calls, "stop web SIGINT")).toBeLessThan(order(driver.calls, "start cleanup"));
    expect(runner.taskStates().web!.Events.map((e) => e.Type)).toEqual(expect.arrayContaining([TASK_EVENT.Killing, TASK_EVENT.Killed]));
    expect(runner.status().status).toBe("complete");
  });

  test("an older version of the alloc is ignored", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    const { runner } = allocRunner({ ...alloc!, AllocModifyIndex: 10 });
    const done = runner.run();
    await waitFor("web running", () => runner.taskStates().web!.State === "running");
    await runner.update({ ...alloc!, DesiredStatus: "stop", AllocModifyIndex: 9 });
    expect(runner.taskStates().web!.State).toBe("running");
    await runner.destroy();
    await done;
  });
});

describe("task runner", () => {
  test("a kill during a long prestart hook aborts the hook's wait: the task dies Killed, never started", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    let sawAbort = false;
    const waitingHook: TaskHook = {
      name: "slow",
      prestart: ({ killed }) =>
        new Promise((_, reject) =>
          killed.addEventListener("abort", () => {
            sawAbort = true;
            reject(killed.reason);
          }),
        ),
    };
    const { runner, driver } = allocRunner(alloc!, { taskHooks: () => [waitingHook] });
    const done = runner.run();
    await waitFor("the prestart hook to be waiting", () => runner.taskStates().web!.Events.some((e) => e.Type === TASK_EVENT.Received));
    await runner.update({ ...alloc!, DesiredStatus: "stop", AllocModifyIndex: alloc!.AllocModifyIndex + 1 });
    await done;
    expect(sawAbort).toBe(true);
    expect(driver.calls.some((call) => call.startsWith("start web"))).toBe(false);
    const events = runner.taskStates().web!.Events.map((e) => e.Type);
    expect(events).toContain(TASK_EVENT.Killed);
    expect(events).not.toContain(TASK_EVENT.SetupFailure);
  });

  test("failures restart per policy with events, then stop as Not Restarting and failed", async () => {
    const [alloc] = await placeJob(job([task("flaky", "exit:1")], { type: "service", restart: 'restart {\n attempts = 2\n delay = "10ms"\n interval = "1m"\n mode = "fail"\n }' }));
    const { runner, driver } = allocRunner(alloc!);
    await runner.run();
    const state = runner.taskStates().flaky!;
    expect(driver.calls.filter((c) => c === "start flaky").length).toBe(3);
    expect(state).toMatchObject({ State: "dead", Failed: true, Restarts: 2 });
    expect(state.Events.map((e) => e.Type)).toEqual([
      TASK_EVENT.Received,
      TASK_EVENT.Started,
      TASK_EVENT.Terminated,
      TASK_EVENT.Restarting,
      TASK_EVENT.Started,
      TASK_EVENT.Terminated,
      TASK_EVENT.Restarting,
      TASK_EVENT.Started,
      TASK_EVENT.Terminated,
      TASK_EVENT.NotRestarting,
    ]);
  });

  test("a batch task that succeeds is not restarted", async () => {
    const [alloc] = await placeJob(job([task("once", "exit:0")], { restart: 'restart {\n attempts = 3\n delay = "10ms"\n }' }));
    const { runner, driver } = allocRunner(alloc!);
    await runner.run();
    expect(driver.calls.filter((c) => c === "start once").length).toBe(1);
    expect(runner.taskStates().once).toMatchObject({ State: "dead", Failed: false });
  });

  test("a start the driver refuses is a Driver Failure and follows the restart policy", async () => {
    const [alloc] = await placeJob(job([task("web", "exit:0")], { restart: 'restart {\n attempts = 1\n delay = "10ms"\n }' }));
    const fixture = allocRunner(alloc!);
    fixture.driver.startFailures = 1;
    await fixture.runner.run();
    const types = fixture.runner.taskStates().web!.Events.map((e) => e.Type);
    expect(types.slice(0, 4)).toEqual([TASK_EVENT.Received, TASK_EVENT.DriverFailure, TASK_EVENT.Restarting, TASK_EVENT.Started]);
    expect(fixture.runner.status().status).toBe("complete");
  });

  test("a task that cannot run as defined fails at once: a Driver Failure, then Not Restarting, no retry", async () => {
    const [alloc] = await placeJob(job([task("web", "exit:0")], { type: "service", restart: 'restart {\n attempts = 3\n delay = "10ms"\n }' }));
    const fixture = allocRunner(alloc!);
    fixture.driver.unrunnable = true;
    await fixture.runner.run();
    const state = fixture.runner.taskStates().web!;
    expect(state.Events.map((e) => e.Type)).toEqual([TASK_EVENT.Received, TASK_EVENT.DriverFailure, TASK_EVENT.NotRestarting]);
    expect(state.Events[2]!.DisplayMessage).toBe("Error was unrecoverable");
    expect(state).toMatchObject({ State: "dead", Failed: true });
    expect(fixture.driver.calls.filter((call) => call === "start web")).toHaveLength(1);
    expect(fixture.runner.status().status).toBe("failed");
  });

  test("an operator restart stops the task and starts it again at once, without counting against the policy", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    const { runner, driver } = allocRunner(alloc!);
    const done = runner.run();
    await waitFor("web running", () => runner.taskStates().web!.State === "running");
    await runner.task("web")!.restart("User requested restart");
    await waitFor("web restarted", () => driver.calls.filter((c) => c === "start web").length === 2 && runner.taskStates().web!.State === "running");
    expect(runner.taskStates().web!.Events.map((e) => e.Type)).toContain(TASK_EVENT.RestartSignal);
    await runner.destroy();
    await done;
  });

  test("restored with every task dead: no alloc dir (nor disk image) is made again for it", async () => {
    const [alloc] = await placeJob(job([task("once", "exit:0")], { type: "batch" }));
    const first = allocRunner(alloc!);
    await first.runner.run();
    expect(first.runner.status().status).toBe("complete");
    // Destroyed (alloc dir and image gone), then the agent was killed before the alloc left the state DB.
    await first.runner.allocDir.destroy();

    const second = allocRunner(alloc!, { stores: first.stores });
    await second.runner.restore();
    await second.runner.run();
    expect(existsSync(second.runner.allocDir.path)).toBe(false);
    expect(second.driver.calls).toEqual([]);
    expect(second.runner.status().status).toBe("complete");
  });

  test("restored with a live task: reattaches and waits, never starts it again", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service", restart: 'restart {\n attempts = 1\n delay = "10ms"\n }' }));
    const first = allocRunner(alloc!);
    void first.runner.run();
    await waitFor("web running", () => first.runner.taskStates().web!.State === "running");

    // A new agent: same stores, a driver that finds the task's executor alive.
    const second = allocRunner(alloc!, { stores: first.stores });
    second.driver.recoverable.add(`${alloc!.ID}/web`);
    await second.runner.restore();
    const done = second.runner.run();
    await waitFor("reattached", () => second.driver.calls.includes("recover web"));
    expect(second.driver.calls).not.toContain("start web");
    expect(second.runner.taskStates().web!.State).toBe("running");
    second.driver.finish(alloc!.ID, "web", 0);
    await waitFor("web restarted by policy", () => second.driver.calls.includes("start web"));
    await second.runner.destroy();
    await done;
  });

  test("reattached, the task is registered with the log pump again though its prestart hooks do not run", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    const registered: string[] = [];
    const logmon = {
      register: async (task: { id: string }) => (registered.push(task.id), { created: false }),
      flush: async () => 0,
      deregister: async () => true,
    };
    const hooks = () => [logmonHook(logmon, `${alloc!.ID}/web`)];
    const first = allocRunner(alloc!, { taskHooks: hooks });
    void first.runner.run();
    await waitFor("web running", () => first.runner.taskStates().web!.State === "running");
    expect(registered).toEqual([`${alloc!.ID}/web`]);

    const second = allocRunner(alloc!, { stores: first.stores, taskHooks: hooks });
    second.driver.recoverable.add(`${alloc!.ID}/web`);
    await second.runner.restore();
    const done = second.runner.run();
    await waitFor("registered again", () => registered.length === 2);
    expect(second.driver.calls).not.toContain("start web");
    await second.runner.destroy();
    await done;
    await first.runner.destroy();
  });

  test("restored after the task's executor vanished: a Driver Failure, then the restart policy", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service", restart: 'restart {\n attempts = 1\n delay = "10ms"\n }' }));
    const first = allocRunner(alloc!);
    void first.runner.run();
    await waitFor("web running", () => first.runner.taskStates().web!.State === "running");

    const second = allocRunner(alloc!, { stores: first.stores });
    await second.runner.restore();
    const done = second.runner.run();
    await waitFor("started again", () => second.driver.calls.includes("start web"));
    expect(second.runner.taskStates().web!.Events.map((e) => e.Type)).toContain(TASK_EVENT.DriverFailure);
    await second.runner.destroy();
    await done;
  });
});

describe("restore at any moment of a task's end", () => {
  /** The stores as a crash at the worst moment leaves them: the end was recorded, not yet the decision. */
  function crashedAfterExit(stores: MemoryStores, allocId: string, task: string, keepKill: boolean) {
    const key = `${allocId}/${task}`;
    const saved = structuredClone(stores.tasks.get(key)!);
    saved.state!.State = "running";
    saved.state!.Events = saved.state!.Events.filter((e) => e.Type !== TASK_EVENT.Killed && e.Type !== TASK_EVENT.NotRestarting);
    saved.handleJson = null;
    if (!keepKill) {
      delete saved.local!.killReason;
      saved.state!.Events = saved.state!.Events.filter((e) => e.Type !== TASK_EVENT.Killing);
    }
    const copy = new MemoryStores();
    copy.tasks.set(key, saved);
    return copy;
  }

  test("killed, then the agent stopped before recording it: the restored runner finishes the kill and starts nothing", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service", restart: 'restart {\n attempts = 3\n delay = "10ms"\n }' }));
    const first = allocRunner(alloc!);
    const done = first.runner.run();
    await waitFor("web running", () => first.runner.taskStates().web!.State === "running");
    await first.runner.stop("alloc not needed due to job update");
    await done;

    const second = allocRunner(alloc!, { stores: crashedAfterExit(first.stores, alloc!.ID, "web", true) });
    await second.runner.restore();
    await second.runner.run();
    expect(second.driver.calls).not.toContain("start web");
    expect(second.runner.taskStates().web).toMatchObject({ State: "dead", Failed: false });
    expect(second.runner.taskStates().web!.Events.at(-1)!.Type).toBe(TASK_EVENT.Killed);
  });

  test("a restart delay that spans agent restarts: one exit, one Restarting, one count, one start", async () => {
    const [alloc] = await placeJob(job([task("web", "exit:1")], { type: "service", restart: 'restart {\n attempts = 2\n delay = "400ms"\n mode = "fail"\n }' }));
    const first = allocRunner(alloc!);
    void first.runner.run();
    await waitFor("the first restart decided", () => first.runner.taskStates().web!.Restarts === 1);
    await first.runner.shutdown();
    let stores = first.stores;
    // Three agents come and go while the delay runs: each restores and stops.
    for (let agent = 0; agent < 3; agent++) {
      const next = allocRunner(alloc!, { stores });
      await next.runner.restore();
      expect(next.runner.taskStates().web).toMatchObject({ State: "pending", Restarts: 1 });
      stores = next.stores;
    }
    const last = allocRunner(alloc!, { stores });
    await last.runner.restore();
    void last.runner.run();
    await waitFor("the second start", () => last.driver.calls.filter((call) => call === "start web").length === 1);
    await waitFor("the second restart decided", () => last.runner.taskStates().web!.Restarts === 2);
    const events = last.runner.taskStates().web!.Events.map((e) => e.Type);
    expect(events.filter((type) => type === TASK_EVENT.Restarting)).toHaveLength(2);
    expect(events.filter((type) => type === TASK_EVENT.Terminated)).toHaveLength(2);
    // The persisted count carried over: the third failure exceeds attempts = 2 and fails the task.
    await waitFor("the task to fail for good", () => last.runner.taskStates().web!.State === "dead");
    expect(last.runner.taskStates().web).toMatchObject({ Failed: true, Restarts: 2 });
    await last.runner.destroy();
  });

  test("ended and recorded, then the agent stopped before letting its handle go: no Driver Failure, one decision", async () => {
    const [alloc] = await placeJob(job([task("web", "exit:3:30")], { type: "service", restart: 'restart {\n attempts = 0\n mode = "fail"\n }' }));
    const first = allocRunner(alloc!);
    await first.runner.run();
    const stores = crashedAfterExit(first.stores, alloc!.ID, "web", false);
    // The handle is still stored, and its executor is gone.
    stores.tasks.get(`${alloc!.ID}/web`)!.handleJson = JSON.stringify(first.driver.handleFor({ allocId: alloc!.ID, taskName: "web" }));

    const second = allocRunner(alloc!, { stores });
    await second.runner.restore();
    await second.runner.run();
    const state = second.runner.taskStates().web!;
    expect(state.Events.map((e) => e.Type)).not.toContain(TASK_EVENT.DriverFailure);
    expect(state.Events.filter((e) => e.Type === TASK_EVENT.Terminated)).toHaveLength(1);
    expect(state).toMatchObject({ State: "dead", Failed: true });
    expect(stores.tasks.get(`${alloc!.ID}/web`)!.handleJson).toBeNull();
  });

  test("ended on its own, then the agent stopped before deciding: the restart policy decides from the real exit", async () => {
    const [alloc] = await placeJob(job([task("web", "exit:3:30")], { type: "service", restart: 'restart {\n attempts = 0\n mode = "fail"\n }' }));
    const first = allocRunner(alloc!);
    await first.runner.run();
    expect(first.runner.taskStates().web!.Failed).toBe(true);

    const second = allocRunner(alloc!, { stores: crashedAfterExit(first.stores, alloc!.ID, "web", false) });
    await second.runner.restore();
    await second.runner.run();
    expect(second.driver.calls).not.toContain("start web");
    const state = second.runner.taskStates().web!;
    expect(state).toMatchObject({ State: "dead", Failed: true });
    expect(state.Events.at(-1)).toMatchObject({ Type: TASK_EVENT.NotRestarting, RestartReason: "Policy allows no restarts" });
  });

  test("started, then the agent stopped before recording it: the reattached task is reported running", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    const first = allocRunner(alloc!);
    void first.runner.run();
    await waitFor("web running", () => first.runner.taskStates().web!.State === "running");

    // The handle was saved; the Started state was not.
    const key = `${alloc!.ID}/web`;
    const saved = structuredClone(first.stores.tasks.get(key)!);
    saved.state!.State = "pending";
    saved.state!.Events = saved.state!.Events.filter((e) => e.Type !== TASK_EVENT.Started);
    const stores = new MemoryStores();
    stores.tasks.set(key, saved);

    const second = allocRunner(alloc!, { stores });
    second.driver.recoverable.add(key);
    await second.runner.restore();
    const done = second.runner.run();
    await waitFor("running reported", () => second.reports.at(-1)?.ClientStatus === "running");
    expect(second.runner.taskStates().web!.Events.at(-1)!.Type).toBe(TASK_EVENT.Started);
    expect(second.driver.calls).not.toContain("start web");
    await second.runner.destroy();
    await done;
    await first.runner.destroy();
  });

  test("a stored handle this binary cannot read: a Driver Failure naming why, then the restart policy", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service", restart: 'restart {\n attempts = 1\n delay = "10ms"\n }' }));
    const stores = new MemoryStores();
    const key = `${alloc!.ID}/web`;
    const taskStore = stores.task(alloc!.ID, "web");
    stores.task = () => ({ ...taskStore, load: () => ({ ...taskStore.load(), handleJson: "{not json" }) });
    const first = allocRunner(alloc!, { stores });
    void first.runner.run();
    await waitFor("web running", () => first.runner.taskStates().web!.State === "running");

    const second = allocRunner(alloc!, { stores });
    await second.runner.restore();
    const failure = second.runner.taskStates().web!.Events.find((e) => e.Type === TASK_EVENT.DriverFailure);
    expect(failure?.DriverError).toStartWith("failed to reattach: stored handle unusable: not JSON");
    expect(stores.tasks.get(key)!.handleJson).toBeNull();
    const done = second.runner.run();
    await waitFor("started again", () => second.driver.calls.includes("start web"));
    await second.runner.destroy();
    await done;
    await first.runner.destroy();
  });

  test("an alloc restored after the server said stop is stopped: nothing starts", async () => {
    const [alloc] = await placeJob(job([task("web", "run"), task("cleanup", "exit:0", 'lifecycle {\n hook = "poststop"\n }')], { type: "service" }));
    const first = allocRunner(alloc!);
    void first.runner.run();
    await waitFor("web running", () => first.runner.taskStates().web!.State === "running");

    const stopped = { ...alloc!, DesiredStatus: "stop" as const, DesiredDescription: "alloc not needed due to job update" };
    const second = allocRunner(stopped, { stores: first.stores });
    second.driver.recoverable.add(`${alloc!.ID}/web`);
    await second.runner.restore();
    await second.runner.run();
    expect(second.driver.calls).toContain("stop web SIGINT");
    expect(second.driver.calls.filter((c) => c.startsWith("start"))).toEqual([]);
    expect(second.runner.status().status).toBe("complete");
    await first.runner.destroy();
  });
});

describe("alloc updates", () => {
  test("versions that arrive while one is applied collapse into the newest", async () => {
    const [alloc] = await placeJob(job([task("web", "run")], { type: "service" }));
    const applied: number[] = [];
    const slowHook = {
      name: "slow",
      async update(ctx: { alloc: { AllocModifyIndex: number } }) {
        applied.push(ctx.alloc.AllocModifyIndex);
        await new Promise((resolve) => setTimeout(resolve, 50));
      },
    };
    const base = alloc!.AllocModifyIndex;
    const { runner } = allocRunner(alloc!, { allocHooks: [allocDirHook(), slowHook] });
    const done = runner.run();
    await waitFor("web running", () => runner.taskStates().web!.State === "running");
    const versions = [1, 2, 3, 4].map((n) => ({ ...alloc!, AllocModifyIndex: base + n }));
    const waits = versions.map((v) => runner.update(v));
    await Promise.all(waits);
    expect(applied).toEqual([base + 1, base + 4]);
    expect(runner.current.AllocModifyIndex).toBe(base + 4);
    await runner.destroy();
    await done;
  });
});
