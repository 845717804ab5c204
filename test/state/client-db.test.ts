import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { clientStatePath, openClientState } from "../../src/state/client/db.ts";
import { migrations } from "../../src/state/client/migrations/index.ts";
import { allocStore, loadAllAllocs, taskStore } from "../../src/state/client/allocs.ts";
import { agentMeta, allocations } from "../../src/state/client/schema.ts";
import { StateDbError } from "../../src/state/migrate.ts";
import { selfArgv } from "../../src/runtime/self.ts";
import { tempDir } from "../helpers/index.ts";
import { job, placeJob, task } from "../client/fixtures.ts";
import { newTaskState } from "../../src/client/taskrunner/task-state.ts";

describe("client state database", () => {
  test("stored rows are checked when read back: a bad one names itself and the field, and nothing is changed", () => {
    const state = openClientState(join(tempDir(), "client"));
    state.raw.exec(`INSERT INTO allocations (id, alloc, local) VALUES ('a1', '{"ID":"a1","Job":{}}', '{"hooks":{"alloc-dir":{"done":"yes"}}}')`);
    state.raw.exec(`INSERT INTO task_runner_states (alloc_id, task_name, state) VALUES ('a1', 'web', '{"State":"sleeping"}')`);
    expect(() => loadAllAllocs(state)).toThrow(StateDbError);
    expect(() => loadAllAllocs(state)).toThrow(/^client state: allocation a1 does not match this drover's schema \(/);
    expect(() => allocStore(state, "a1").loadLocal()).toThrow(/allocation a1's runner state .*\(hooks\.alloc-dir\.done: /);
    expect(() => taskStore(state, "a1", "web", "raw_exec").load()).toThrow(/task web of allocation a1: state .*\(State: /);
    expect(state.db.select().from(allocations).all()).toHaveLength(1);
    state.raw.close();
  });

  test("an alloc stored before its job gained Nomad 1.x's fields loads, those fields at their zero values", async () => {
    const [alloc] = await placeJob(job([task("web", "/bin/true")]));
    const state = openClientState(join(tempDir(), "client"));
    allocStore(state, alloc!.ID).saveAlloc(alloc!);
    state.raw.exec(`UPDATE allocations SET alloc = json_remove(alloc, '$.Job.NodePool', '$.Job.TaskGroups[0].Consul', '$.Job.TaskGroups[0].Tasks[0].Actions')`);
    const [loaded] = loadAllAllocs(state);
    expect(loaded!.alloc.Job.NodePool).toBe("");
    expect(loaded!.alloc.Job.TaskGroups[0]!.Consul).toBeNull();
    expect(loaded!.alloc.Job.TaskGroups[0]!.Tasks[0]!.Actions).toBeNull();
    state.raw.close();
  });

  test("what the stores write is what a reopened database loads: each write sets only its own columns", async () => {
    const [alloc] = await placeJob(job([task("web", "/bin/true")]));
    const dir = join(tempDir(), "client");
    const state = openClientState(dir);
    const running = { ...newTaskState(), State: "running" as const };
    allocStore(state, alloc!.ID).saveAlloc(alloc!);
    allocStore(state, alloc!.ID).saveLocal({ hooks: { alloc_dir: { done: true } } });
    allocStore(state, alloc!.ID).saveAlloc({ ...alloc!, ClientStatus: "running" });
    const web = taskStore(state, alloc!.ID, "web", "raw_exec");
    web.saveLocal({ hooks: { task_dir: { done: true } } });
    web.saveState(running, { hooks: { task_dir: { done: true }, logmon: { done: true } } });
    web.saveLocal({ hooks: { task_dir: { done: true }, logmon: { done: true } }, killReason: "stopped" });
    web.saveHandle({ pid: 1 });
    web.saveHandle({ pid: 2 });
    const other = taskStore(state, alloc!.ID, "other", "raw_exec");
    other.saveLocal({ hooks: {} });
    state.raw.close();

    const reopened = openClientState(dir);
    const [loaded] = loadAllAllocs(reopened);
    expect(loaded!.alloc.ClientStatus).toBe("running");
    expect(loaded!.local).toEqual({ hooks: { alloc_dir: { done: true } } });
    expect(allocStore(reopened, alloc!.ID).loadLocal()).toEqual({ hooks: { alloc_dir: { done: true } } });
    expect(loaded!.tasks.get("web")).toEqual({
      state: running,
      local: { hooks: { task_dir: { done: true }, logmon: { done: true } }, killReason: "stopped" },
      handleJson: JSON.stringify({ pid: 2 }),
    });
    expect(loaded!.tasks.get("other")).toEqual({ state: null, local: { hooks: {} }, handleJson: null });
    reopened.raw.close();
  });

  test("a fresh data dir gets a migrated WAL database", () => {
    const dataDir = tempDir();
    const state = openClientState(join(dataDir, "client"));
    state.db.insert(agentMeta).values({ key: "k", value: "v" }).run();
    state.raw.close();
    const db = new Database(clientStatePath(join(dataDir, "client")), { readonly: true });
    expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    expect(db.query("SELECT count(*) AS n FROM __drizzle_migrations").get()).toEqual({ n: migrations.length });
    expect(db.query("SELECT value FROM agent_meta WHERE key = 'k'").get()).toEqual({ value: "v" });
    db.close();
  });

  test("reopening applies nothing twice and keeps rows", () => {
    const dataDir = tempDir();
    const first = openClientState(join(dataDir, "client"));
    first.db.insert(agentMeta).values({ key: "a", value: "1" }).run();
    first.raw.close();
    const second = openClientState(join(dataDir, "client"));
    expect(second.db.select().from(agentMeta).all()).toEqual([{ key: "a", value: "1" }]);
    expect(second.raw.all<{ n: number }>("SELECT count(*) AS n FROM __drizzle_migrations")[0]!.n).toBe(migrations.length);
    second.raw.close();
  });

  test("a corrupt database is refused and left byte-for-byte untouched", () => {
    const dataDir = tempDir();
    const path = clientStatePath(join(dataDir, "client"));
    mkdirSync(dirname(path), { recursive: true });
    const garbage = Buffer.alloc(8192, 0x5a);
    writeFileSync(path, garbage);
    expect(() => openClientState(join(dataDir, "client"))).toThrow(StateDbError);
    expect(() => openClientState(join(dataDir, "client"))).toThrow(/is (corrupt|unreadable).*left untouched/);
    expect(readFileSync(path).equals(garbage)).toBe(true);
  });

  test("a database from a newer drover is refused and left untouched", () => {
    const dataDir = tempDir();
    openClientState(join(dataDir, "client")).raw.close();
    const path = clientStatePath(join(dataDir, "client"));
    const db = new Database(path);
    db.run("INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('from-the-future', 9999999999999)");
    db.run("PRAGMA wal_checkpoint(TRUNCATE)");
    db.close();
    const before = readFileSync(path);
    expect(() => openClientState(join(dataDir, "client"))).toThrow(/written by a newer drover/);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  test("the embedded migrations match the drizzle-kit folder", async () => {
    const script = join(import.meta.dir, "../../scripts/embed-migrations.ts");
    const check = Bun.spawnSync([selfArgv([])[0]!, script, "--check", join(import.meta.dir, "../../src/state/client/migrations")]);
    expect(check.stderr.toString()).toBe("");
    expect(check.exitCode).toBe(0);
  });
});
