import { describe, expect, test } from "bun:test";
import { nextDelay, nextRescheduleTime } from "../../../src/server/scheduler/reschedule.ts";
import type { Allocation } from "../../../src/structs/alloc.ts";
import { waitFor } from "../../helpers/index.ts";
import { ALL_AT_ONCE, oneNodeServer, testJob } from "../fixtures.ts";

const SECOND_NS = 1e9;

function setup() {
  const { server, allocsOf } = oneNodeServer();
  const live = (jobId: string) => allocsOf(jobId).filter((alloc) => alloc.DesiredStatus === "run" && alloc.ClientStatus !== "failed");
  /** The client's report that the alloc's task failed `agoMs` ago. */
  const fail = (alloc: Allocation, agoMs: number) => {
    const finished = new Date(Date.now() - agoMs).toISOString();
    server.allocs.updateFromClient([
      {
        ID: alloc.ID,
        ClientStatus: "failed",
        TaskStates: { srv: { State: "dead", Failed: true, Restarts: 0, LastRestart: null, StartedAt: finished, FinishedAt: finished, Events: [] } },
      },
    ]);
  };
  return { server, allocsOf, live, fail };
}

/** A job with the reschedule policy and no deployment (a failure in a running deployment fails the deployment instead). */
function jobWith(id: string, reschedule: Record<string, unknown>, type = "service") {
  const job = testJob(id, { type, update: ALL_AT_ONCE }) as { TaskGroups: Record<string, unknown>[] };
  job.TaskGroups[0]!.ReschedulePolicy = reschedule;
  return job;
}

describe("rescheduling failed allocs", () => {
  test("a failure past its delay is replaced at once, carrying the history; attempts used up leave it failed", () => {
    const { server, allocsOf, live, fail } = setup();
    server.jobs.register(jobWith("once", { Attempts: 1, Interval: 3600 * SECOND_NS, Delay: 5 * SECOND_NS, DelayFunction: "constant", Unlimited: false }));
    const [original] = allocsOf("once");
    fail(original!, 10_000);
    const failed = server.allocs.get(original!.ID);
    expect(failed).toMatchObject({ DesiredStatus: "stop", DesiredDescription: "alloc was rescheduled because it failed" });
    const [replacement] = live("once");
    expect(replacement).toMatchObject({ Name: original!.Name, PreviousAllocation: original!.ID });
    expect(failed.NextAllocation).toBe(replacement!.ID);
    expect(replacement!.RescheduleTracker!.Events).toEqual([expect.objectContaining({ PrevAllocID: original!.ID, PrevNodeID: original!.NodeID, Delay: 5 * SECOND_NS })]);

    fail(replacement!, 10_000);
    expect(live("once")).toHaveLength(0);
    expect(server.allocs.get(replacement!.ID)).toMatchObject({ DesiredStatus: "run", ClientStatus: "failed", NextAllocation: "" });
  });

  test("a failure within its delay waits in a pending follow-up evaluation, which the server runs when it is due", async () => {
    const { server, allocsOf, live, fail } = setup();
    server.jobs.register(jobWith("later", { Attempts: 0, Interval: 0, Delay: 5 * SECOND_NS, DelayFunction: "exponential", MaxDelay: 60 * SECOND_NS, Unlimited: true }));
    const [original] = allocsOf("later");
    // Due in about 2 s: beyond the window in which a reschedule is done at once.
    fail(original!, 3_000);
    const waiting = server.allocs.get(original!.ID);
    expect(waiting.FollowupEvalID).not.toBe("");
    const followup = server.evals.get(waiting.FollowupEvalID);
    expect(followup).toMatchObject({ Status: "pending", TriggeredBy: "alloc-failure", JobID: "later" });
    expect(Date.parse(followup.WaitUntil)).toBeGreaterThan(Date.now() - 1000);
    expect(live("later")).toHaveLength(0);

    const [replacement] = await waitFor("the delayed replacement", () => (live("later").length === 1 ? live("later") : null));
    expect(replacement!.PreviousAllocation).toBe(original!.ID);
    expect(server.evals.get(followup.ID).Status).toBe("complete");
  });

  test("delays: constant, exponential and fibonacci, capped at max_delay", () => {
    const base = testJob("d") as { TaskGroups: Record<string, unknown>[] };
    /** A failed alloc rescheduled before with `delays`, the last time `lastAgo` seconds before this failure. */
    const allocWith = (policy: Record<string, unknown>, delays: number[], lastAgo = 1): Allocation =>
      ({
        ClientStatus: "failed",
        DesiredStatus: "run",
        TaskGroup: "web",
        TaskStates: null,
        ModifyTime: 1000 * SECOND_NS,
        RescheduleTracker: {
          Events: delays.map((delay, i) => ({ RescheduleTime: (1000 - lastAgo - (delays.length - 1 - i)) * SECOND_NS, PrevAllocID: "", PrevNodeID: "", Delay: delay * SECOND_NS })),
        },
        Job: { ...base, TaskGroups: [{ ...base.TaskGroups[0], Name: "web", ReschedulePolicy: { Attempts: 0, Interval: 0, Unlimited: true, ...policy } }] },
      }) as unknown as Allocation;
    expect(nextDelay(allocWith({ Delay: 5 * SECOND_NS, DelayFunction: "constant", MaxDelay: 0 }, [5, 5]))).toBe(5 * SECOND_NS);
    expect(nextDelay(allocWith({ Delay: 5 * SECOND_NS, DelayFunction: "exponential", MaxDelay: 60 * SECOND_NS }, [5, 10]))).toBe(20 * SECOND_NS);
    expect(nextDelay(allocWith({ Delay: 5 * SECOND_NS, DelayFunction: "exponential", MaxDelay: 30 * SECOND_NS }, [5, 10, 20]))).toBe(30 * SECOND_NS);
    expect(nextDelay(allocWith({ Delay: 5 * SECOND_NS, DelayFunction: "fibonacci", MaxDelay: 60 * SECOND_NS }, [5, 5, 10]))).toBe(15 * SECOND_NS);
    // Capped, and the last reschedule long before this failure: back to the first delay.
    expect(nextDelay(allocWith({ Delay: 5 * SECOND_NS, DelayFunction: "exponential", MaxDelay: 10 * SECOND_NS }, [5, 10]))).toBe(10 * SECOND_NS);
    expect(nextDelay(allocWith({ Delay: 5 * SECOND_NS, DelayFunction: "exponential", MaxDelay: 10 * SECOND_NS }, [5, 10], 60))).toBe(5 * SECOND_NS);
    const limited = allocWith({ Attempts: 2, Interval: 3600 * SECOND_NS, Unlimited: false, Delay: 5 * SECOND_NS, DelayFunction: "constant" }, [5, 5]);
    expect(nextRescheduleTime(limited)).toBeUndefined();
  });
});
