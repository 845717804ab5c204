import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { KEYSTORE_DIR } from "../../src/server/server.ts";
import { serverStatePath } from "../../src/state/server/db.ts";
import type { Variable, VariableMetadata } from "../../src/structs/variable.ts";
import { openTestServer } from "../server/fixtures.ts";

type App = ReturnType<typeof createApp>;

interface Answer<T> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

async function call<T>(app: App, method: string, path: string, options: { body?: unknown; token?: string } = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = options.token ? { "X-Nomad-Token": options.token } : {};
  const res = await app.request(path, { method, headers, ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }) });
  const text = await res.text();
  const json = res.headers.get("Content-Type")?.startsWith("application/json") ? (JSON.parse(text) as T) : (undefined as T);
  return { status: res.status, body: json, text, headers: res.headers };
}

describe("variables without ACLs", () => {
  const { server, dataDir } = openTestServer();
  const app = createApp(pino({ level: "silent" }), serverRoutes(server));

  test("PUT creates with Nomad's fields, GET reads it, an update keeps CreateIndex and moves ModifyIndex", async () => {
    const created = await call<Variable>(app, "PUT", "/v1/var/app/web/config", { body: { Items: { user: "admin", port: "8080" } } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ Namespace: "default", Path: "app/web/config", Items: { user: "admin", port: "8080" } });
    expect(created.body.CreateIndex).toBe(created.body.ModifyIndex);
    expect(created.body.CreateTime).toBeGreaterThan(Date.parse("2020-01-01") * 1e6);
    expect(Number(created.headers.get("X-Nomad-Index"))).toBe(created.body.ModifyIndex);

    const read = await call<Variable>(app, "GET", "/v1/var/app/web/config");
    expect(read.body).toEqual(created.body);

    const updated = await call<Variable>(app, "POST", "/v1/var/app/web/config", { body: { Items: { user: "root" } } });
    expect(updated.body).toMatchObject({ CreateIndex: created.body.CreateIndex, CreateTime: created.body.CreateTime, Items: { user: "root" } });
    expect(updated.body.ModifyIndex).toBeGreaterThan(created.body.ModifyIndex);
  });

  test("check-and-set: a stale or zero cas is a 409 answering the variable as it stands; the right one writes", async () => {
    const first = await call<Variable>(app, "PUT", "/v1/var/cas/one?cas=0", { body: { Items: { a: "1" } } });
    expect(first.status).toBe(200);
    const again = await call<Variable>(app, "PUT", "/v1/var/cas/one?cas=0", { body: { Items: { a: "2" } } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual(first.body);
    expect(Number(again.headers.get("X-Nomad-Index"))).toBe(first.body.ModifyIndex);
    const stale = await call<Variable>(app, "PUT", `/v1/var/cas/one?cas=${first.body.ModifyIndex + 100}`, { body: { Items: { a: "2" } } });
    expect(stale.status).toBe(409);
    const right = await call<Variable>(app, "PUT", `/v1/var/cas/one?cas=${first.body.ModifyIndex}`, { body: { Items: { a: "2" } } });
    expect(right.status).toBe(200);
    expect(right.body.Items).toEqual({ a: "2" });
    const missing = await call<Variable>(app, "PUT", "/v1/var/cas/none?cas=5", { body: { Items: { a: "1" } } });
    expect(missing).toMatchObject({ status: 409, body: { Namespace: "default", Path: "cas/none", CreateIndex: 0, ModifyIndex: 0, CreateTime: 0, ModifyTime: 0, Items: null } });

    const staleDelete = await call<Variable>(app, "DELETE", `/v1/var/cas/one?cas=${first.body.ModifyIndex}`);
    expect(staleDelete).toMatchObject({ status: 409, body: { ModifyIndex: right.body.ModifyIndex, Items: { a: "2" } } });
    const deleted = await call(app, "DELETE", `/v1/var/cas/one?cas=${right.body.ModifyIndex}`);
    expect(deleted.status).toBe(204);
    expect(await call(app, "GET", "/v1/var/cas/one")).toMatchObject({ status: 404, text: "variable not found" });
    expect((await call(app, "DELETE", "/v1/var/cas/one?cas=0")).status).toBe(204);
    expect((await call(app, "DELETE", "/v1/var/cas/one")).status).toBe(204);
    expect(await call(app, "DELETE", "/v1/var/cas/one?cas=x")).toMatchObject({ status: 400, text: expect.stringContaining("can not parse cas") });
  });

  test("list: by prefix and namespace, Nomad's order, a page at a time with X-Nomad-NextToken", async () => {
    for (const path of ["list/b", "list/a", "list/c"]) await call(app, "PUT", `/v1/var/${path}`, { body: { Items: { k: path } } });
    await call(app, "PUT", "/v1/var/list/a?namespace=prod", { body: { Items: { k: "prod" } } });
    const all = await call<VariableMetadata[]>(app, "GET", "/v1/vars?prefix=list/");
    expect(all.body.map((meta) => meta.Path)).toEqual(["list/a", "list/b", "list/c"]);
    expect(all.body[0]).not.toHaveProperty("Items");
    const prod = await call<VariableMetadata[]>(app, "GET", "/v1/vars?prefix=list/&namespace=prod");
    expect(prod.body.map((meta) => `${meta.Namespace}/${meta.Path}`)).toEqual(["prod/list/a"]);
    const everywhere = await call<VariableMetadata[]>(app, "GET", "/v1/vars?prefix=list/&namespace=*");
    expect(everywhere.body.map((meta) => `${meta.Namespace}/${meta.Path}`)).toEqual(["default/list/a", "default/list/b", "default/list/c", "prod/list/a"]);

    const page1 = await call<VariableMetadata[]>(app, "GET", "/v1/vars?prefix=list/&per_page=2");
    expect(page1.body.map((meta) => meta.Path)).toEqual(["list/a", "list/b"]);
    expect(page1.headers.get("X-Nomad-NextToken")).toBe("default.list/c");
    const page2 = await call<VariableMetadata[]>(app, "GET", "/v1/vars?prefix=list/&per_page=2&next_token=default.list/c");
    expect(page2.body.map((meta) => meta.Path)).toEqual(["list/c"]);
    expect(page2.headers.get("X-Nomad-NextToken")).toBeNull();
    const reversed = await call<VariableMetadata[]>(app, "GET", "/v1/vars?prefix=list/&reverse=true");
    expect(reversed.body.map((meta) => meta.Path)).toEqual(["list/c", "list/b", "list/a"]);
    expect(await call(app, "GET", "/v1/vars?filter=Path%20matches%20x")).toMatchObject({ status: 400, text: expect.stringContaining("filter") });
  });

  test("a namespace that holds a variable is not deleted (its variables would be left in no namespace)", async () => {
    expect((await call(app, "PUT", "/v1/namespace/keeps", { body: { Name: "keeps" } })).status).toBe(200);
    expect((await call(app, "PUT", "/v1/var/app/kept?namespace=keeps", { body: { Items: { k: "v" } } })).status).toBe(200);
    const refused = await call(app, "DELETE", "/v1/namespace/keeps");
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('namespace "keeps" still holds 1 variable');
    expect((await call(app, "GET", "/v1/namespace/keeps")).status).toBe(200);
    expect((await call<Variable>(app, "GET", "/v1/var/app/kept?namespace=keeps")).body.Items).toEqual({ k: "v" });
    expect((await call(app, "DELETE", "/v1/var/app/kept?namespace=keeps")).status).toBe(204);
    expect((await call(app, "DELETE", "/v1/namespace/keeps")).status).toBe(200);
    expect((await call(app, "GET", "/v1/namespace/keeps")).status).toBe(404);
  });

  test("bad variables are refused in Nomad's words, nothing written", async () => {
    const before = await call<VariableMetadata[]>(app, "GET", "/v1/vars?prefix=bad");
    expect(await call(app, "PUT", "/v1/var/bad/empty", { body: { Items: {} } })).toMatchObject({ status: 400, text: "variable missing required Items object" });
    expect(await call(app, "PUT", "/v1/var/bad/none", { body: {} })).toMatchObject({ status: 400, text: "variable missing required Items object" });
    expect(await call(app, "PUT", "/v1/var/bad/big", { body: { Items: { k: "x".repeat(64 * 1024) } } })).toMatchObject({ status: 400, text: "variables are limited to 64KiB in total size" });
    expect(await call(app, "PUT", "/v1/var/bad/sp%20ace", { body: { Items: { k: "v" } } })).toMatchObject({ status: 400, text: 'invalid path "bad/sp ace"' });
    expect(await call(app, "PUT", "/v1/var/nomad/other", { body: { Items: { k: "v" } } })).toMatchObject({ status: 400, text: expect.stringContaining('only paths at "nomad/jobs"') });
    expect(await call(app, "PUT", "/v1/var/bad/type", { body: { Items: { k: 1 } } })).toMatchObject({ status: 400, text: expect.stringContaining("Items.k") });
    expect(await call(app, "GET", "/v1/var/")).toMatchObject({ status: 400, text: "missing variable path" });
    expect((await call<VariableMetadata[]>(app, "GET", "/v1/vars?prefix=bad")).body).toEqual(before.body);
  });

  test("a blocking read returns once the variable changes", async () => {
    const first = await call<Variable>(app, "PUT", "/v1/var/watch/me", { body: { Items: { v: "1" } } });
    const waiting = call<Variable>(app, "GET", `/v1/var/watch/me?index=${first.body.ModifyIndex}&wait=1m`);
    await call(app, "PUT", "/v1/var/watch/other", { body: { Items: { v: "x" } } });
    await call(app, "PUT", "/v1/var/watch/me", { body: { Items: { v: "2" } } });
    expect((await waiting).body.Items).toEqual({ v: "2" });
  });

  test("stored encrypted with a key kept outside the database, and read back after a restart", async () => {
    await call(app, "PUT", "/v1/var/secret/db", { body: { Items: { password: "hunter2-plaintext" } } });
    const db = new Database(serverStatePath(dataDir), { readonly: true });
    const rows = db.query("SELECT * FROM variables").all() as Record<string, string>[];
    db.close();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain("hunter2-plaintext");
    const keystore = join(dataDir, "server", KEYSTORE_DIR);
    const keys = readdirSync(keystore);
    expect(keys).toHaveLength(1);
    expect(statSync(join(keystore, keys[0]!)).mode & 0o777).toBe(0o600);

    server.close();
    const reopened = openTestServer({ dataDir }).server;
    const again = createApp(pino({ level: "silent" }), serverRoutes(reopened));
    expect((await call<Variable>(again, "GET", "/v1/var/secret/db")).body.Items).toEqual({ password: "hunter2-plaintext" });
    reopened.close();
  });
});

describe("variables with ACLs", () => {
  const { server } = openTestServer();
  const app = createApp(pino({ level: "silent" }), serverRoutes(server, true), { acl: { resolver: server.acl } });
  const root = server.acl.bootstrap().SecretID;
  const policy = `namespace "default" {
    policy = "write"
    variables {
      path "team/*" { capabilities = ["read", "write", "destroy"] }
      path "team/locked" { capabilities = ["write"] }
    }
  }`;

  test("a token's variables rules decide each path; the list shows only what it may list", async () => {
    await server.acl.upsertPolicy({ Name: "team", Description: "", Rules: policy });
    const secret = server.acl.upsertToken({ AccessorID: "", Name: "t", Type: "client", Policies: ["team"], Global: false, ExpirationTTL: 0 }).SecretID;
    for (const path of ["team/a", "team/locked", "ops/b"]) expect((await call(app, "PUT", `/v1/var/${path}`, { body: { Items: { k: "v" } }, token: root })).status).toBe(200);

    expect((await call<Variable>(app, "GET", "/v1/var/team/a", { token: secret })).body.Items).toEqual({ k: "v" });
    expect(await call(app, "GET", "/v1/var/ops/b", { token: secret })).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await call(app, "GET", "/v1/var/team/locked", { token: secret })).status).toBe(403);
    expect((await call(app, "PUT", "/v1/var/ops/c", { body: { Items: { k: "v" } }, token: secret })).status).toBe(403);
    expect((await call(app, "DELETE", "/v1/var/ops/b", { token: secret })).status).toBe(403);
    // Nomad hides a conflicting variable's items from a writer that may not read it.
    const blind = await call<Variable>(app, "PUT", "/v1/var/team/locked?cas=0", { body: { Items: { k: "w" } }, token: secret });
    expect(blind).toMatchObject({ status: 409, body: { Path: "team/locked", Items: null } });

    const listed = await call<VariableMetadata[]>(app, "GET", "/v1/vars", { token: secret });
    expect(listed.body.map((meta) => meta.Path)).toEqual(["team/a"]);
    expect((await call<VariableMetadata[]>(app, "GET", "/v1/vars")).body).toEqual([]);
    expect(await call(app, "GET", "/v1/vars", { token: "00000000-0000-0000-0000-000000000000" })).toMatchObject({ status: 403, text: "ACL token not found" });
    expect((await call(app, "DELETE", "/v1/var/team/a", { token: secret })).status).toBe(204);
  });
});
