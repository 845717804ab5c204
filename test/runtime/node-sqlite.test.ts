/**
 * The node:sqlite half of runtime/sqlite.ts (Deno's), run here under Bun,
 * which has node:sqlite too: Drizzle's queries, joins whose columns share
 * names, transactions that commit, roll back and nest, and read-only opens.
 */
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { join } from "node:path";
import { openSqlite } from "../../src/runtime/node-sqlite.ts";
import { tempDir } from "../helpers/index.ts";

const jobs = sqliteTable("jobs", { id: text("id").primaryKey(), name: text("name").notNull(), version: integer("version").notNull() });
const allocs = sqliteTable("allocs", { id: text("id").primaryKey(), jobId: text("job_id").notNull(), name: text("name").notNull() });
const schema = { jobs, allocs };

function open(dir = tempDir()) {
  const path = join(dir, "state.db");
  const opened = openSqlite(path, schema);
  opened.raw.exec("CREATE TABLE jobs (id TEXT PRIMARY KEY, name TEXT NOT NULL, version INTEGER NOT NULL)");
  opened.raw.exec("CREATE TABLE allocs (id TEXT PRIMARY KEY, job_id TEXT NOT NULL, name TEXT NOT NULL)");
  return { ...opened, path };
}

describe("node:sqlite under Drizzle", () => {
  test("inserts, selects, updates and joins columns of the same name", () => {
    const { db, raw } = open();
    db.insert(jobs).values({ id: "j1", name: "web", version: 1 }).run();
    db.insert(allocs).values([{ id: "a1", jobId: "j1", name: "web.g[0]" }, { id: "a2", jobId: "j1", name: "web.g[1]" }]).run();
    db.update(jobs).set({ version: 2 }).where(eq(jobs.id, "j1")).run();
    expect(db.select().from(jobs).get()).toEqual({ id: "j1", name: "web", version: 2 });
    const joined = db.select({ job: jobs.name, alloc: allocs.name }).from(allocs).innerJoin(jobs, eq(allocs.jobId, jobs.id)).orderBy(allocs.id).all();
    expect(joined).toEqual([{ job: "web", alloc: "web.g[0]" }, { job: "web", alloc: "web.g[1]" }]);
    expect(raw.all<{ n: number }>("SELECT count(*) AS n FROM allocs WHERE job_id = ?", "j1")).toEqual([{ n: 2 }]);
    raw.close();
  });

  test("a transaction that throws leaves nothing; a nested one rolls back alone", () => {
    const { db, raw } = open();
    expect(() =>
      db.transaction((tx) => {
        tx.insert(jobs).values({ id: "lost", name: "lost", version: 1 }).run();
        throw new Error("abort");
      }),
    ).toThrow("abort");
    db.transaction((tx) => {
      tx.insert(jobs).values({ id: "kept", name: "kept", version: 1 }).run();
      expect(() =>
        tx.transaction((inner) => {
          inner.insert(jobs).values({ id: "inner", name: "inner", version: 1 }).run();
          throw new Error("inner abort");
        }),
      ).toThrow("inner abort");
    });
    expect(db.select({ id: jobs.id }).from(jobs).all()).toEqual([{ id: "kept" }]);
    expect(() => raw.transaction(() => (raw.exec("INSERT INTO jobs VALUES ('raw', 'raw', 1)"), raw.exec("INSERT INTO nowhere VALUES (1)")))).toThrow();
    expect(raw.all("SELECT id FROM jobs WHERE id = 'raw'")).toEqual([]);
    raw.close();
  });

  test("a read-only open reads and refuses writes", () => {
    const dir = tempDir();
    const writer = open(dir);
    writer.db.insert(jobs).values({ id: "j1", name: "web", version: 1 }).run();
    writer.raw.close();
    const reader = openSqlite(writer.path, schema, { readonly: true });
    expect(reader.db.select({ id: jobs.id }).from(jobs).all()).toEqual([{ id: "j1" }]);
    expect(() => reader.db.insert(jobs).values({ id: "j2", name: "x", version: 1 }).run()).toThrow(/readonly/);
    reader.raw.close();
  });
});
