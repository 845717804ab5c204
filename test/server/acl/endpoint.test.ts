import { describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { TokenUpsertSchema, type TokenUpsert } from "../../../src/acl/structs.ts";
import type { Caller } from "../../../src/acl/resolver.ts";
import { BOOTSTRAP_RESET_FILE } from "../../../src/server/acl/endpoint.ts";
import { ServerError } from "../../../src/server/errors.ts";
import { openTestServer } from "../fixtures.ts";

const token = (fields: Partial<v.InferInput<typeof TokenUpsertSchema>>): TokenUpsert => v.parse(TokenUpsertSchema, fields);

function caller(acl: ReturnType<typeof openTestServer>["server"]["acl"], secret: string | undefined): Caller {
  const resolution = acl.resolve(secret);
  if ("refused" in resolution) throw new Error(resolution.refused);
  return resolution.caller;
}

function errorOf(fn: () => unknown): { kind: string; message: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServerError) return { kind: err.kind, message: err.message };
    throw err;
  }
  throw new Error("expected a ServerError");
}

describe("ACL bootstrap", () => {
  test("once: a management token with its secret; then refused with the reset index, which the reset file lifts once", () => {
    const { server, dataDir } = openTestServer();
    const first = server.acl.bootstrap();
    expect(first).toMatchObject({ Name: "Bootstrap Token", Type: "management", Global: true, Policies: null });
    expect(first.SecretID).toMatch(/^[0-9a-f-]{36}$/);
    expect(caller(server.acl, first.SecretID).acl.isManagement).toBe(true);

    const again = errorOf(() => server.acl.bootstrap());
    expect(again).toEqual({ kind: "invalid", message: `ACL bootstrap already done (reset index: ${first.CreateIndex})` });

    writeFileSync(join(dataDir, "server", BOOTSTRAP_RESET_FILE), "999\n");
    expect(errorOf(() => server.acl.bootstrap()).message).toBe(`Invalid bootstrap reset index (specified 999, reset index: ${first.CreateIndex})`);
    writeFileSync(join(dataDir, "server", BOOTSTRAP_RESET_FILE), `${first.CreateIndex}\n`);
    const second = server.acl.bootstrap();
    expect(second.SecretID).not.toBe(first.SecretID);
    // The reset index moved on, so the same file does not work twice.
    expect(errorOf(() => server.acl.bootstrap()).message).toContain(`specified ${first.CreateIndex}, reset index: ${second.CreateIndex}`);
    server.close();
  });
});

describe("ACL tokens", () => {
  test("secrets are stored only as hashes, answered only at creation, and survive a restart as hashes", () => {
    const { server, dataDir } = openTestServer();
    const root = server.acl.bootstrap();
    const created = server.acl.upsertToken(token({ Name: "ci", Type: "client", Policies: ["deployer"] }));
    expect(created.SecretID).toMatch(/^[0-9a-f-]{36}$/);
    const management = caller(server.acl, root.SecretID);
    expect(server.acl.getToken(management, created.AccessorID).SecretID).toBe("");
    expect(server.acl.self(caller(server.acl, created.SecretID), created.SecretID)).toMatchObject({ AccessorID: created.AccessorID, SecretID: created.SecretID });
    expect(JSON.stringify(server.acl.listTokens())).not.toContain(created.SecretID);
    server.close();

    const files = readdirSync(join(dataDir, "server"), { withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(dataDir, "server", entry.name)).toString("latin1"));
    for (const secret of [root.SecretID, created.SecretID]) expect(files.some((bytes) => bytes.includes(secret))).toBe(false);

    const { server: reopened } = openTestServer({ dataDir });
    expect(caller(reopened.acl, created.SecretID).token?.AccessorID).toBe(created.AccessorID);
    reopened.close();
  });

  test("Nomad's rules for a token's shape, update and delete", () => {
    const { server } = openTestServer();
    expect(errorOf(() => server.acl.upsertToken(token({ Type: "client" }))).message).toBe("token 0 invalid: client token missing policies");
    expect(errorOf(() => server.acl.upsertToken(token({ Type: "management", Policies: ["x"] }))).message).toBe(
      "token 0 invalid: management token cannot be associated with policies",
    );
    const created = server.acl.upsertToken(token({ Name: "a", Policies: ["p1"] }));
    const updated = server.acl.upsertToken(token({ AccessorID: created.AccessorID, Name: "b", Policies: ["p2"] }));
    expect(updated).toMatchObject({ AccessorID: created.AccessorID, Name: "b", Policies: ["p2"], SecretID: "" });
    expect(updated.ModifyIndex).toBeGreaterThan(created.ModifyIndex);
    // The old secret still names the token after an update.
    expect(caller(server.acl, created.SecretID).token?.Name).toBe("b");
    expect(errorOf(() => server.acl.upsertToken(token({ AccessorID: created.AccessorID, Policies: ["p2"], Global: true }))).message).toBe(
      `cannot toggle global mode of ${created.AccessorID}`,
    );
    server.acl.deleteToken(created.AccessorID);
    expect(server.acl.resolve(created.SecretID)).toEqual({ refused: "ACL token not found" });
    expect(errorOf(() => server.acl.deleteToken(created.AccessorID)).message).toBe(`Cannot delete nonexistent tokens: ${created.AccessorID}`);
    server.close();
  });

  test("expiry: within the bounds, and an expired token is refused", async () => {
    const { server } = openTestServer({ aclTokenLifetimes: { minTtlMs: 0, maxTtlMs: 3_600_000 } });
    expect(errorOf(() => server.acl.upsertToken(token({ Policies: ["p"], ExpirationTTL: "2h" }))).message).toBe(
      "token 0 invalid: expiration time cannot be more than 3600s in the future",
    );
    const short = server.acl.upsertToken(token({ Policies: ["p"], ExpirationTTL: "50ms" }));
    expect(short.ExpirationTime).not.toBeNull();
    expect("caller" in server.acl.resolve(short.SecretID)).toBe(true);
    while (Date.now() <= Date.parse(short.ExpirationTime!)) await Bun.sleep(10);
    expect(server.acl.resolve(short.SecretID)).toEqual({ refused: "ACL token expired" });
    server.close();
  });

  test("an unknown or malformed secret is not found; no secret is the anonymous policy", async () => {
    const { server } = openTestServer();
    expect(server.acl.resolve("00000000-0000-0000-0000-000000000000")).toEqual({ refused: "ACL token not found" });
    expect(server.acl.resolve("not-a-uuid")).toEqual({ refused: "ACL token not found" });
    expect(caller(server.acl, undefined).acl.allowNamespaceOperation("default", "list-jobs")).toBe(false);
    await server.acl.upsertPolicy({ Name: "anonymous", Description: "", Rules: `namespace "default" { policy = "read" }` });
    expect(caller(server.acl, undefined).acl.allowNamespaceOperation("default", "list-jobs")).toBe(true);
    server.close();
  });
});

describe("ACL policies", () => {
  test("a policy change reaches the tokens that name it at once; a client sees only its own policies", async () => {
    const { server } = openTestServer();
    const client = server.acl.upsertToken(token({ Policies: ["ops"] }));
    expect(caller(server.acl, client.SecretID).acl.allowScope("node", "write")).toBe(false);
    await server.acl.upsertPolicy({ Name: "ops", Description: "operators", Rules: `node { policy = "write" }` });
    await server.acl.upsertPolicy({ Name: "other", Description: "", Rules: `agent { policy = "read" }` });
    const clientCaller = caller(server.acl, client.SecretID);
    expect(clientCaller.acl.allowScope("node", "write")).toBe(true);
    expect(server.acl.listPolicies(clientCaller).map((policy) => policy.Name)).toEqual(["ops"]);
    expect(server.acl.getPolicy(clientCaller, "ops").RulesJSON.Node).toEqual({ Policy: "write" });
    expect(errorOf(() => server.acl.getPolicy(clientCaller, "other"))).toEqual({ kind: "denied", message: "Permission denied" });
    server.acl.deletePolicy("ops");
    expect(caller(server.acl, client.SecretID).acl.allowScope("node", "write")).toBe(false);
    server.close();
  });

  test("bad rules are a 400 naming the problem, and store nothing", async () => {
    const { server } = openTestServer();
    const before = server.acl.index;
    await expect(server.acl.upsertPolicy({ Name: "bad", Description: "", Rules: `namespace "default" { policy = "bogus" }` })).rejects.toMatchObject({
      kind: "invalid",
      message: expect.stringContaining('policy "bad": namespace "default": policy: expected one of'),
    });
    expect(server.acl.index).toBe(before);
    expect(server.acl.listPolicies(caller(server.acl, server.acl.bootstrap().SecretID))).toEqual([]);
    server.close();
  });
});
