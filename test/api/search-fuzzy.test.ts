import { describe, expect, test } from "bun:test";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { openTestServer, testJob, testNode } from "../server/fixtures.ts";

const { server } = openTestServer();
const node = testNode();
server.nodes.upsert(node);
const app = createApp(pino({ level: "silent" }), serverRoutes(server));

interface Match {
  ID: string;
  Scope?: string[];
}
interface Answer {
  Matches: Record<string, Match[]>;
  Truncations: Record<string, boolean>;
  Index: number;
}

async function fuzzy(body: unknown, query = ""): Promise<{ status: number; body: Answer; text: string }> {
  const res = await app.request(`/v1/search/fuzzy${query}`, { method: "POST", body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: res.ok ? (JSON.parse(text) as Answer) : (undefined as unknown as Answer), text };
}

describe("POST /v1/search/fuzzy", () => {
  test("names containing the text, any case, with their scope: jobs, groups, tasks, commands, allocs, nodes, variables", async () => {
    await app.request("/v1/jobs", { method: "POST", body: JSON.stringify({ Job: testJob("billing-api", { groups: ["api-web"] }) }) });
    await app.request("/v1/jobs", { method: "POST", body: JSON.stringify({ Job: testJob("API") }) });
    await app.request("/v1/var/apps/api-keys", { method: "PUT", body: JSON.stringify({ Items: { k: "v" } }) });
    const { status, body } = await fuzzy({ Text: "Api", Context: "all" });
    expect(status).toBe(200);
    // The match nearest the start of the name first, then the shorter name.
    expect(body.Matches.jobs).toEqual([
      { ID: "API", Scope: ["default", "API"] },
      { ID: "billing-api", Scope: ["default", "billing-api"] },
    ]);
    expect(body.Matches.groups).toEqual([{ ID: "api-web", Scope: ["default", "billing-api"] }]);
    expect(body.Matches.vars).toEqual([{ ID: "apps/api-keys", Scope: ["default", "apps/api-keys"] }]);
    expect(body.Matches.allocs!.map((match) => match.ID).sort()).toEqual(["API.web[0]", "billing-api.api-web[0]"]);
    expect(body.Truncations).toMatchObject({ jobs: false, nodes: false, allocs: false });

    const commands = await fuzzy({ Text: "sleep", Context: "jobs" });
    expect(commands.body.Matches.commands).toContainEqual({ ID: "/bin/sleep", Scope: ["default", "API", "web", "srv"] });
    expect(Object.keys(commands.body.Matches).every((context) => ["commands"].includes(context))).toBe(true);
    expect((await fuzzy({ Text: node.Name.slice(1, 4), Context: "nodes" })).body.Matches.nodes).toEqual([{ ID: node.Name, Scope: [node.ID] }]);
  });

  test("UUID-named contexts match ?prefix=; short text and unknown contexts are refused in Nomad's words", async () => {
    const evals = await fuzzy({ Text: "xx", Context: "evals" }, "?prefix=");
    expect(evals.body.Matches.evals!.length).toBeGreaterThan(0);
    expect(evals.body.Matches.evals![0]).toEqual({ ID: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(await fuzzy({ Text: "a", Context: "jobs" })).toMatchObject({ status: 400, text: "fuzzy search query must be at least 2 characters, got 1" });
    expect(await fuzzy({ Text: "ab", Context: "widgets" })).toMatchObject({ status: 400, text: expect.stringContaining("context must be one of") });
  });

  test("a context looks at its first 20 objects and says it was truncated", async () => {
    for (let i = 0; i < 22; i++) server.jobs.register(testJob(`zz-${String(i).padStart(2, "0")}`, { count: 0 }));
    const { body } = await fuzzy({ Text: "zz-", Context: "jobs" });
    expect(body.Truncations.jobs).toBe(true);
    expect(body.Matches.jobs!.length).toBeLessThan(22);
  });
});

describe("POST /v1/search/fuzzy across namespaces", () => {
  const { server: nsServer } = openTestServer();
  nsServer.nodes.upsert(testNode());
  const nsApp = createApp(pino({ level: "silent" }), serverRoutes(nsServer));
  const search = async (body: unknown, query = "") => (await (await nsApp.request(`/v1/search/fuzzy${query}`, { method: "POST", body: JSON.stringify(body) })).json()) as Answer;

  test("searches the request's namespace (every one with *), and finds the namespaces that exist", async () => {
    await nsApp.request("/v1/namespace/hidden", { method: "PUT", body: JSON.stringify({ Name: "hidden" }) });
    await nsApp.request("/v1/jobs?namespace=hidden", { method: "POST", body: JSON.stringify({ Job: testJob("secret-app") }) });
    await nsApp.request("/v1/jobs", { method: "POST", body: JSON.stringify({ Job: testJob("public-app") }) });

    const inDefault = await search({ Text: "app", Context: "all" });
    expect(inDefault.Matches.jobs).toEqual([{ ID: "public-app", Scope: ["default", "public-app"] }]);
    expect(inDefault.Matches.allocs!.map((match) => match.Scope![0])).toEqual(["default"]);
    expect(inDefault.Matches.evals!.length).toBe(1);

    const inHidden = await search({ Text: "app", Context: "all" }, "?namespace=hidden");
    expect(inHidden.Matches.jobs).toEqual([{ ID: "secret-app", Scope: ["hidden", "secret-app"] }]);
    expect(inHidden.Matches.allocs!.map((match) => match.Scope![0])).toEqual(["hidden"]);

    const everywhere = await search({ Text: "app", Context: "jobs" }, "?namespace=*");
    expect(everywhere.Matches.jobs!.map((match) => match.ID).sort()).toEqual(["public-app", "secret-app"]);
    // Nomad's web UI names the namespace in the body; ?namespace= wins over it.
    expect((await search({ Text: "app", Context: "jobs", Namespace: "*" })).Matches.jobs).toEqual(everywhere.Matches.jobs!);
    expect((await search({ Text: "app", Context: "jobs", Namespace: "*" }, "?namespace=hidden")).Matches.jobs).toEqual(inHidden.Matches.jobs!);

    expect((await search({ Text: "hid", Context: "namespaces" })).Matches.namespaces).toEqual([{ ID: "hidden" }]);
  });
});
