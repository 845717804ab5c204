/** Batched alloc status reports: newest wins, one batch at a time, failures kept for the retry. */
import { expect, test } from "bun:test";
import { AllocSync } from "../../src/client/alloc-sync.ts";
import type { AllocClientUpdate } from "../../src/structs/api.ts";
import { silentLogger } from "./fixtures.ts";

const update = (id: string, status: AllocClientUpdate["ClientStatus"]): AllocClientUpdate => ({ ID: id, ClientStatus: status, ClientDescription: "" });

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
