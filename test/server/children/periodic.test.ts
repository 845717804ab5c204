import { describe, expect, test } from "bun:test";
import { waitFor } from "../../helpers/index.ts";
import { openTestServer, testJob, testNode } from "../fixtures.ts";

function setup(dataDir?: string) {
  const { server, dataDir: dir } = openTestServer(dataDir ? { dataDir } : {});
  if (!dataDir) server.nodes.upsert(testNode());
  const children = (parent: string) => server.jobs.list(`${parent}/periodic-`).filter((job) => job.ParentID === parent);
  return { server, dataDir: dir, children };
}

function periodicJob(id: string, spec: string, prohibitOverlap = false) {
  return { ...testJob(id, { type: "batch" }), Periodic: { Spec: spec, ProhibitOverlap: prohibitOverlap, TimeZone: "Europe/Berlin" } };
}

describe("periodic jobs", () => {
  test("registering places nothing; the parent runs; children launch at the spec's times", async () => {
    const { server, children } = setup();
    const response = server.jobs.register(periodicJob("tick", "* * * * * * *"));
    expect(response.EvalID).toBe("");
    expect(server.jobs.allocations("tick")).toHaveLength(0);
    expect(server.jobs.get("tick").Status).toBe("running");
    const [child] = await waitFor("a launched child", () => (children("tick").length > 0 ? children("tick") : null));
    expect(child!.ID).toMatch(/^tick\/periodic-\d+$/);
    expect(server.jobs.get(child!.ID)).toMatchObject({ ParentID: "tick", Periodic: null, Type: "batch" });
    expect(server.jobs.allocations(child!.ID)).toHaveLength(1);
    expect(server.jobs.list("tick").find((stub) => stub.ID === "tick")).toMatchObject({ Periodic: true, ParentID: "" });
    server.jobs.deregister("tick", true);
    server.close();
  });

  test("prohibit_overlap skips a launch while a child is not dead", async () => {
    const { server, children } = setup();
    server.jobs.register(periodicJob("solo", "* * * * * * *", true));
    const [first] = await waitFor("the first child", () => (children("solo").length === 1 ? children("solo") : null));
    // The child's alloc never finishes here (no client runs it): the next launch times are skipped.
    const launchedAt = Number(first!.ID.split("-").pop()) * 1000;
    await waitFor("two more launch times to pass", () => Date.now() > launchedAt + 2500);
    expect(children("solo")).toHaveLength(1);
    expect(server.jobs.summary("solo").Children).toEqual({ Pending: 0, Running: 1, Dead: 0 });
    // The list counts children too; it also shows the child's own alloc in the child's summary.
    const listed = server.jobs.list();
    expect(listed.find((stub) => stub.ID === "solo")?.JobSummary).toEqual(server.jobs.summary("solo"));
    expect(listed.find((stub) => stub.ID === first!.ID)?.JobSummary).toEqual(server.jobs.summary(first!.ID));
    server.close();
  });

  test("force launches a child now; a job that is not periodic is refused", () => {
    const { server, children } = setup();
    server.jobs.register(periodicJob("yearly", "0 0 1 1 *"));
    const forced = server.jobs.periodicForce("yearly");
    expect(server.evals.get(forced.EvalID)).toMatchObject({ TriggeredBy: "periodic-job" });
    expect(children("yearly")).toHaveLength(1);
    server.jobs.register(testJob("plain"));
    expect(() => server.jobs.periodicForce("plain")).toThrow("can't force launch non-periodic job");
    expect(() => server.jobs.periodicForce("nope")).toThrow('job "nope" not found');
    server.close();
  });

  test("a launch missed while the server was down happens once when it opens", async () => {
    const { server, dataDir, children } = setup();
    server.jobs.register(periodicJob("missed", "* * * * * * *"));
    const before = children("missed").length;
    const closedAt = Date.now();
    server.close();
    await waitFor("several launch times to pass", () => Date.now() - closedAt > 2500);
    const { server: reopened, children: after } = setup(dataDir);
    expect(after("missed").length).toBe(before + 1);
    reopened.jobs.deregister("missed", true);
    reopened.close();
  });

  test("a bad spec or time zone, or a service job, is refused on register", () => {
    const { server } = setup();
    expect(() => server.jobs.register(periodicJob("bad", "every day"))).toThrow(/Job\.Periodic\.Spec: invalid cron spec "every day"/);
    expect(() => server.jobs.register({ ...periodicJob("tz", "@daily"), Periodic: { Spec: "@daily", TimeZone: "Nowhere/Land" } })).toThrow(
      /Job\.Periodic\.TimeZone: invalid time zone "Nowhere\/Land"/,
    );
    expect(() => server.jobs.register({ ...periodicJob("svc", "@daily"), Type: "service" })).toThrow(/periodic can only be used with the "batch" or "sysbatch" scheduler/);
    server.close();
  });
});
