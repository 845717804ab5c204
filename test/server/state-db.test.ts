import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { renderIndex } from "../../scripts/embed-migrations.ts";
import { StateDbError } from "../../src/state/migrate.ts";
import { serverStatePath } from "../../src/state/server/db.ts";
import { openTestServer, testJob, testNode } from "./fixtures.ts";

const MIGRATIONS = join(import.meta.dir, "../../src/state/server/migrations");

describe("server state database", () => {
  test("the embedded migrations match the drizzle-kit folder", () => {
    expect(readFileSync(join(MIGRATIONS, "index.ts"), "utf8")).toBe(renderIndex(MIGRATIONS));
  });

  test("it lives at <data_dir>/server/state.db in WAL mode, one row per object", () => {
    const { server, dataDir } = openTestServer();
    server.nodes.upsert(testNode());
    server.jobs.register(testJob("rows", { count: 2 }));
    server.close();
    const db = new Database(serverStatePath(dataDir), { readonly: true });
    expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.query("SELECT count(*) AS n FROM allocations").get()).toEqual({ n: 2 });
    expect(db.query("SELECT job_id, version FROM job_versions").all()).toEqual([{ job_id: "rows", version: 0 }]);
    expect(db.query("SELECT value FROM server_meta WHERE key = 'index'").get()).toEqual({ value: "2" });
    db.close();
  });

  test("a job stored before the job gained Nomad 1.x's fields loads with Nomad's defaults, and registering it again changes nothing", () => {
    const { server, dataDir } = openTestServer();
    server.nodes.upsert(testNode());
    server.jobs.register(testJob("older"));
    server.close();
    const db = new Database(serverStatePath(dataDir));
    for (const table of ["jobs", "job_versions"]) {
      db.run(`UPDATE ${table} SET body = json_remove(body, '$.NodePool', '$.UI', '$.TaskGroups[0].Disconnect', '$.TaskGroups[0].Tasks[0].Identities')`);
    }
    db.close();
    const reopened = openTestServer({ dataDir }).server;
    const job = reopened.jobs.get("older");
    expect(job.NodePool).toBe("default");
    expect(job.UI).toBeNull();
    expect(job.TaskGroups[0]!.Disconnect).toBeNull();
    expect(job.TaskGroups[0]!.Tasks[0]!.Identities).toBeNull();
    reopened.jobs.register(testJob("older"));
    expect(reopened.jobs.get("older").Version).toBe(0);
    reopened.close();
  });

  test("a row that does not match the schema is refused at start, naming it", () => {
    const { server, dataDir } = openTestServer();
    server.nodes.upsert(testNode());
    server.jobs.register(testJob("bad"));
    server.close();
    const db = new Database(serverStatePath(dataDir));
    db.run(`UPDATE jobs SET body = json_set(body, '$.Priority', 'high')`);
    db.close();
    expect(() => openTestServer({ dataDir })).toThrow(StateDbError);
    expect(() => openTestServer({ dataDir })).toThrow(/server state: job bad does not match this drover's schema \(Priority: /);
  });
});
