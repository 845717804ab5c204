/**
 * Batched alloc status reports: newest wins, one batch at a time, failures
 * kept for the retry; a batch gathers longer while many allocs report, and a
 * lone change (or the last of a burst) still goes after the short delay.
 */
import { afterEach, expect, jest, test } from "bun:test";
import { ALLOC_SYNC_DELAY_MS, ALLOC_SYNC_MAX_DELAY_MS, AllocSync } from "../../src/client/alloc-sync.ts";
import type { AllocClientUpdate } from "../../src/structs/api.ts";
import { silentLogger } from "./fixtures.ts";

const update = (id: string, status: AllocClientUpdate["ClientStatus"], extra: Partial<AllocClientUpdate> = {}): AllocClientUpdate => ({ ID: id, ClientStatus: status, ClientDescription: "", ...extra });

/** A server whose answers the test releases one by one. */
function slowServer() {
  const batches: AllocClientUpdate[][] = [];
  const answers: ((ok: boolean) => void)[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const send = (batch: AllocClientUpdate[]) => {
    batches.push(batch);
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    return new Promise<void>((resolve, reject) =>
      answers.push((ok) => {
        inFlight--;
        if (ok) resolve();
        else reject(new Error("server busy"));
      }),
    );
  };
  return { send, batches, answers, mostInFlight: () => mostInFlight };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("overlapping flushes send one batch at a time, and none resolves before the server has what was pending", async () => {
  const server = slowServer();
  const sync = new AllocSync(server.send, silentLogger);
  sync.queue(update("a", "pending"));
  const first = sync.flush();
  await settle();
  sync.queue(update("a", "running"));
  let secondDone = false;
  let thirdDone = false;
  const second = sync.flush().then(() => (secondDone = true));
  const third = sync.flush().then(() => (thirdDone = true));
  await settle();
  server.answers[0]!(true);
  await first;
  await settle();
  // "running" is on its way: neither flush may report it delivered yet.
  expect(server.batches.map((b) => b.map((u) => u.ClientStatus))).toEqual([["pending"], ["running"]]);
  expect([secondDone, thirdDone]).toEqual([false, false]);
  expect(server.mostInFlight()).toBe(1);
  server.answers[1]!(true);
  await Promise.all([second, third]);
  await sync.stop();
});

test("a refused batch is kept for the retry unless a newer update of the alloc came meanwhile", async () => {
  const server = slowServer();
  const sync = new AllocSync(server.send, silentLogger);
  sync.queue(update("a", "running"));
  sync.queue(update("b", "running"));
  const first = sync.flush();
  await settle();
  sync.queue(update("b", "complete"));
  server.answers[0]!(false);
  await first;
  const retry = sync.flush();
  await settle();
  server.answers[1]!(true);
  await retry;
  await sync.stop();
  expect(server.batches[1]!.map((u) => `${u.ID}:${u.ClientStatus}`).sort()).toEqual(["a:running", "b:complete"]);
});

/** A server that takes every batch at once, noting the (fake) time each came. */
function quickServer() {
  const batches: { at: number; updates: AllocClientUpdate[] }[] = [];
  const send = async (updates: AllocClientUpdate[]) => {
    batches.push({ at: performance.now(), updates });
  };
  /** Each alloc's status as the server holds it after every batch so far, in order. */
  const latest = () => {
    const statuses = new Map<string, string>();
    for (const batch of batches) for (const u of batch.updates) statuses.set(u.ID, u.ClientStatus);
    return statuses;
  };
  return { send, batches, latest };
}

/** Moves the fake clock `ms` milliseconds, one at a time, letting each send's promise settle. */
async function advance(ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) {
    jest.advanceTimersByTime(1);
    for (let j = 0; j < 4; j++) await Promise.resolve();
  }
}

afterEach(() => jest.useRealTimers());

test("a lone alloc's changes go as one batch once ALLOC_SYNC_DELAY_MS has passed", async () => {
  jest.useFakeTimers();
  const server = quickServer();
  const sync = new AllocSync(server.send, silentLogger);
  sync.queue(update("a", "pending"));
  sync.queue(update("a", "running"));
  await advance(ALLOC_SYNC_DELAY_MS - 1);
  expect(server.batches).toHaveLength(0);
  await advance(1);
  expect(server.batches.map((b) => b.updates.map((u) => `${u.ID}:${u.ClientStatus}`))).toEqual([["a:running"]]);
  await sync.stop();
});

test("while a thousand allocs start, batches gather up to ALLOC_SYNC_MAX_DELAY_MS, each alloc's newest status arrives, and the last goes once they run", async () => {
  jest.useFakeTimers();
  const server = quickServer();
  const sync = new AllocSync(server.send, silentLogger);
  const ALLOCS = 1000;
  const ids = Array.from({ length: ALLOCS }, (_, i) => `a${i}`);
  // The client starts them all; two a millisecond get their turn: pending, then running 2 ms later.
  sync.willStart(ids);
  const STARTING_MS = ALLOCS / 2 + 2;
  for (let ms = 0; ms < STARTING_MS; ms++) {
    for (const id of ids.slice(2 * ms, 2 * ms + 2)) sync.queue(update(id, "pending"));
    for (const id of ms >= 2 ? ids.slice(2 * (ms - 2), 2 * (ms - 2) + 2) : []) sync.queue(update(id, "running"));
    await advance(1);
  }
  const lastRunning = performance.now();
  await advance(ALLOC_SYNC_MAX_DELAY_MS);
  const latest = server.latest();
  expect(latest.size).toBe(ALLOCS);
  expect([...latest.values()].every((status) => status === "running")).toBe(true);
  // A batch every ALLOC_SYNC_DELAY_MS would be 50 writes, each waking every blocking query on the job.
  expect(server.batches.length).toBeLessThan(STARTING_MS / ALLOC_SYNC_DELAY_MS / 4);
  const gaps = server.batches.slice(1).map((b, i) => b.at - server.batches[i]!.at);
  expect(Math.max(...gaps)).toBeLessThanOrEqual(ALLOC_SYNC_MAX_DELAY_MS);
  // The last allocs running were not held for a whole window: none was starting any more.
  expect(server.batches.at(-1)!.at - lastRunning).toBeLessThanOrEqual(ALLOC_SYNC_DELAY_MS);
  await sync.stop();
});

test("with a few allocs starting, each batch goes after ALLOC_SYNC_DELAY_MS", async () => {
  jest.useFakeTimers();
  const server = quickServer();
  const sync = new AllocSync(server.send, silentLogger);
  // A dispatch stream: an alloc every 5 ms, pending, then running 10 ms later, then complete.
  for (let ms = 0; ms < 200; ms++) {
    if (ms % 5 === 0) sync.queue(update(`d${ms}`, "pending"));
    if (ms % 5 === 0 && ms >= 10) sync.queue(update(`d${ms - 10}`, "running"));
    if (ms % 5 === 0 && ms >= 20) sync.queue(update(`d${ms - 20}`, "complete"));
    await advance(1);
  }
  const gaps = server.batches.slice(1).map((b, i) => b.at - server.batches[i]!.at);
  expect(Math.max(...gaps)).toBeLessThanOrEqual(ALLOC_SYNC_DELAY_MS);
  await sync.stop();
});

test("while many allocs start, an alloc that ended or a health decision goes after ALLOC_SYNC_DELAY_MS", async () => {
  jest.useFakeTimers();
  const server = quickServer();
  const sync = new AllocSync(server.send, silentLogger);
  sync.willStart(Array.from({ length: 500 }, (_, i) => `s${i}`));
  sync.queue(update("s0", "pending"));
  await advance(ALLOC_SYNC_DELAY_MS);
  expect(server.batches).toHaveLength(0);
  sync.queue(update("done", "complete"));
  await advance(ALLOC_SYNC_DELAY_MS);
  expect(server.batches.map((b) => b.updates.map((u) => u.ID).sort())).toEqual([["done", "s0"]]);
  sync.queue(update("s1", "pending"));
  sync.queue(update("healthy", "running", { DeploymentStatus: { Healthy: true, Timestamp: null, Canary: false, ModifyIndex: 0 } }));
  await advance(ALLOC_SYNC_DELAY_MS);
  expect(server.batches.at(-1)!.updates.map((u) => u.ID).sort()).toEqual(["healthy", "s1"]);
  await sync.stop();
});

test("allocs the client let go of before they ran no longer hold the batches", async () => {
  jest.useFakeTimers();
  const server = quickServer();
  const sync = new AllocSync(server.send, silentLogger);
  const ids = Array.from({ length: 500 }, (_, i) => `gone${i}`);
  sync.willStart(ids);
  for (const id of ids) sync.forget(id);
  sync.queue(update("a", "running"));
  await advance(ALLOC_SYNC_DELAY_MS);
  expect(server.batches.map((b) => b.updates.map((u) => u.ID))).toEqual([["a"]]);
  await sync.stop();
});
