import { describe, expect, test } from "bun:test";
import { openTestServer, testJob, testNode } from "../fixtures.ts";

function setup() {
  const { server } = openTestServer();
  server.nodes.upsert(testNode());
  server.jobs.register({
    ...testJob("param", { type: "batch" }),
    Meta: { owner: "ops" },
    ParameterizedJob: { Payload: "required", MetaRequired: ["who"], MetaOptional: ["why"] },
  });
  return { server };
}

const payload = Buffer.from("input").toString("base64");

describe("dispatching a parameterized job", () => {
  test("a child with the payload and merged meta is registered and scheduled; the parent never runs", () => {
    const { server } = setup();
    expect(server.jobs.get("param").Status).toBe("running");
    expect(server.jobs.allocations("param")).toHaveLength(0);
    const response = server.jobs.dispatch("param", { Payload: payload, Meta: { who: "me" } });
    expect(response.DispatchedJobID).toMatch(/^param\/dispatch-\d+-[0-9a-f]{8}$/);
    const child = server.jobs.get(response.DispatchedJobID);
    expect(child).toMatchObject({ ParentID: "param", Dispatched: true, Payload: payload, Meta: { owner: "ops", who: "me" } });
    expect(server.jobs.allocations(child.ID)).toHaveLength(1);
    expect(server.evals.get(response.EvalID).JobID).toBe(child.ID);
    const stubs = server.jobs.list("param");
    expect(stubs.find((stub) => stub.ID === "param")).toMatchObject({ ParameterizedJob: true });
    expect(stubs.find((stub) => stub.ID === child.ID)).toMatchObject({ ParameterizedJob: false, ParentID: "param" });
    expect(server.jobs.summary("param").Children).toEqual({ Pending: 0, Running: 1, Dead: 0 });
  });

  test("payload and meta are checked against the parameterized block, as Nomad checks them", () => {
    const { server } = setup();
    expect(() => server.jobs.dispatch("param", { Payload: null, Meta: { who: "me" } })).toThrow("Payload is not provided but required by parameterized job");
    expect(() => server.jobs.dispatch("param", { Payload: payload, Meta: {} })).toThrow("Dispatch did not provide required meta keys: [who]");
    expect(() => server.jobs.dispatch("param", { Payload: payload, Meta: { who: "me", color: "red" } })).toThrow(
      "Dispatch request included unpermitted metadata keys: [color]",
    );
    const big = Buffer.alloc(17 * 1024).toString("base64");
    expect(() => server.jobs.dispatch("param", { Payload: big, Meta: { who: "me" } })).toThrow("Payload exceeds maximum size; 17408 > 16384");
    server.jobs.register(testJob("plain"));
    expect(() => server.jobs.dispatch("plain", { Payload: null, Meta: null })).toThrow('Specified job "plain" is not a parameterized job');
    server.jobs.deregister("param", false);
    expect(() => server.jobs.dispatch("param", { Payload: payload, Meta: { who: "me" } })).toThrow('Specified job "param" is stopped');
    expect(server.jobs.list().filter((job) => job.ParentID === "param")).toHaveLength(0);
  });
});
