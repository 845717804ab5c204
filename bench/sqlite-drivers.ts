/**
 * SQLite under Drizzle on each runtime, to weigh the drivers drover could use:
 *
 *   bun:sqlite      Drizzle 0.45's bun-sqlite driver (drover on Bun)
 *   node:sqlite     Drizzle 0.45's bun-sqlite session over node:sqlite
 *                   (runtime/node-sqlite.ts: drover on Deno), on Bun and Deno
 *   1.0 rc          Drizzle 1.0.0-rc's own node-sqlite driver, on Bun and Deno,
 *                   when --drizzle-rc DIR names a scratch install of it
 *                   (npm install drizzle-orm@1.0.0-rc.5 in DIR): drover does
 *                   not depend on it
 *
 * Each row is a fresh process: the driver's import, then on a WAL database
 * with drover's pragmas: single-row upserts (one transaction each, as most of
 * drover's writes), point reads by key, and 10-row transactions (a scheduling
 * pass). Median of the rounds.
 *
 *   bun bench/sqlite-drivers.ts [--rounds 3] [--drizzle-rc DIR]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { spawnProcess } from "../src/runtime/spawn.ts";
import { DENO } from "../test/helpers/runtimes.ts";
import { machineLine, median, printTable } from "./lib.ts";

const ROWS = 2_000;
const TRANSACTIONS = 200;
const ROWS_PER_TRANSACTION = 10;

const { values } = parseArgs({
  args: process.argv.slice(2),
  options: { worker: { type: "string" }, rounds: { type: "string", default: "3" }, "drizzle-rc": { type: "string" } },
});

/** What a worker measures, in ms. */
interface Figures {
  importMs: number;
  upsertMs: number;
  readMs: number;
  transactionMs: number;
}

/** The calls the workload makes, whatever the driver: each returns once the work is done. */
interface Workload {
  upsert(id: string, version: number): void;
  read(id: string): unknown;
  transaction(fn: () => void): void;
  close(): void;
}

async function openWorkload(driver: string, path: string): Promise<Workload> {
  const pragmas = ["PRAGMA busy_timeout = 5000", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL"];
  const create = "CREATE TABLE jobs (id TEXT PRIMARY KEY, name TEXT NOT NULL, version INTEGER NOT NULL)";
  if (driver === "rc") {
    const rc = values["drizzle-rc"]!;
    const { drizzle } = await import(join(rc, "node_modules/drizzle-orm/node-sqlite/index.js"));
    const core = await import(join(rc, "node_modules/drizzle-orm/sqlite-core/index.js"));
    const { eq } = await import(join(rc, "node_modules/drizzle-orm/index.js"));
    const jobs = core.sqliteTable("jobs", { id: core.text("id").primaryKey(), name: core.text("name").notNull(), version: core.integer("version").notNull() });
    const db = drizzle(path);
    for (const sql of [...pragmas, create]) db.$client.exec(sql);
    return {
      upsert: (id, version) => db.insert(jobs).values({ id, name: id, version }).onConflictDoUpdate({ target: jobs.id, set: { version } }).run(),
      read: (id) => db.select().from(jobs).where(eq(jobs.id, id)).get(),
      transaction: (fn) => db.transaction(fn),
      close: () => db.$client.close(),
    };
  }
  const { eq } = await import("drizzle-orm");
  const { integer, sqliteTable, text } = await import("drizzle-orm/sqlite-core");
  const jobs = sqliteTable("jobs", { id: text("id").primaryKey(), name: text("name").notNull(), version: integer("version").notNull() });
  // bun:sqlite only under Bun; runtime/sqlite.ts is each runtime's own driver.
  const { openSqlite } = driver === "node-sqlite" ? await import("../src/runtime/node-sqlite.ts") : await import("../src/runtime/sqlite.ts");
  const { db, raw } = openSqlite(path, { jobs });
  for (const sql of [...pragmas, create]) raw.exec(sql);
  return {
    upsert: (id, version) => void db.insert(jobs).values({ id, name: id, version }).onConflictDoUpdate({ target: jobs.id, set: { version } }).run(),
    read: (id) => db.select().from(jobs).where(eq(jobs.id, id)).get(),
    transaction: (fn) => db.transaction(fn),
    close: () => raw.close(),
  };
}

async function worker(driver: string): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), "drover-bench-sqlite-"));
  try {
    const started = performance.now();
    const work = await openWorkload(driver, join(dir, "state.db"));
    const importMs = performance.now() - started;
    const time = (fn: () => void) => {
      const t = performance.now();
      fn();
      return performance.now() - t;
    };
    const upsertMs = time(() => {
      for (let i = 0; i < ROWS; i++) work.upsert(`job-${i}`, 1);
    });
    const readMs = time(() => {
      for (let i = 0; i < ROWS; i++) if (!work.read(`job-${(i * 7919) % ROWS}`)) throw new Error("row missing");
    });
    const transactionMs = time(() => {
      for (let t = 0; t < TRANSACTIONS; t++) {
        work.transaction(() => {
          for (let i = 0; i < ROWS_PER_TRANSACTION; i++) work.upsert(`job-${(t * ROWS_PER_TRANSACTION + i) % ROWS}`, t + 2);
        });
      }
    });
    work.close();
    return { importMs, upsertMs, readMs, transactionMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.worker) {
  console.log(JSON.stringify(await worker(values.worker)));
  process.exit(0);
}

const script = new URL(import.meta.url).pathname;
const forwarded = values["drizzle-rc"] ? ["--drizzle-rc", values["drizzle-rc"]] : [];
const runners: [name: string, argv: string[]][] = [
  ["bun:sqlite, Drizzle 0.45 (drover on Bun)", [process.execPath, script, "--worker", "bun-sqlite"]],
  ["node:sqlite on Bun, Drizzle 0.45 + adapter", [process.execPath, script, "--worker", "node-sqlite"]],
  ["node:sqlite on Deno, Drizzle 0.45 + adapter (drover on Deno)", [DENO, "run", "-A", script, "--worker", "node-sqlite"]],
  ...(values["drizzle-rc"]
    ? ([
        ["node:sqlite on Bun, Drizzle 1.0.0-rc driver", [process.execPath, script, "--worker", "rc", ...forwarded]],
        ["node:sqlite on Deno, Drizzle 1.0.0-rc driver", [DENO, "run", "-A", script, "--worker", "rc", ...forwarded]],
      ] as [string, string[]][])
    : []),
];

async function run(argv: readonly string[]): Promise<Figures> {
  const child = spawnProcess({ argv, env: process.env, stdout: "pipe", stderr: "inherit" });
  const [status, out] = await Promise.all([child.exited, new Response(child.stdout).text()]);
  if (status.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${status.exitCode}`);
  return JSON.parse(out.trim().split("\n").at(-1)!) as Figures;
}

const rounds = Number(values.rounds);
const rows: (string | number)[][] = [];
for (const [name, argv] of runners) {
  const samples: Figures[] = [];
  for (let round = 0; round < rounds; round++) samples.push(await run(argv));
  const med = (key: keyof Figures) => median(samples.map((s) => s[key]));
  rows.push([name, med("importMs"), (med("upsertMs") * 1000) / ROWS, (med("readMs") * 1000) / ROWS, (med("transactionMs") * 1000) / TRANSACTIONS]);
}
printTable(
  `SQLite under Drizzle: ${ROWS} upserts, ${ROWS} reads by key, ${TRANSACTIONS} transactions of ${ROWS_PER_TRANSACTION} upserts (WAL, synchronous NORMAL; median of ${rounds})`,
  ["driver", "import + open ms", "µs per upsert", "µs per read", "µs per 10-row transaction"],
  rows,
);
console.log(machineLine());
