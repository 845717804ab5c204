import { describe, expect, test } from "bun:test";
import { AllocBroadcaster } from "../../../src/client/allocrunner/broadcaster.ts";

const alloc = (index: number) => ({ AllocModifyIndex: index, ID: `v${index}` });

describe("alloc broadcaster", () => {
  test("a waiting watcher gets the update at once", async () => {
    const b = new AllocBroadcaster<ReturnType<typeof alloc>>();
    const w = b.watch();
    const next = w.next();
    b.send(alloc(1));
    expect(await next).toEqual(alloc(1));
  });

  test("a slow watcher sees only the newest of the updates it missed", async () => {
    const b = new AllocBroadcaster<ReturnType<typeof alloc>>();
    const w = b.watch();
    b.send(alloc(1));
    b.send(alloc(2));
    b.send(alloc(3));
    expect(await w.next()).toEqual(alloc(3));
    b.send(alloc(4));
    expect(await w.next()).toEqual(alloc(4));
  });

  test("a stale update is dropped; the same index again is delivered", async () => {
    const b = new AllocBroadcaster<ReturnType<typeof alloc>>();
    const w = b.watch();
    expect(b.send(alloc(5))).toBe(true);
    expect(await w.next()).toEqual(alloc(5));
    expect(b.send(alloc(4))).toBe(false);
    expect(b.send(alloc(5))).toBe(true);
    expect(await w.next()).toEqual(alloc(5));
  });

  test("every watcher gets every newest update", async () => {
    const b = new AllocBroadcaster<ReturnType<typeof alloc>>();
    const [a, c] = [b.watch(), b.watch()];
    b.send(alloc(1));
    expect(await Promise.all([a.next(), c.next()])).toEqual([alloc(1), alloc(1)]);
  });

  test("closing ends waiting and future reads; sends after close are refused", async () => {
    const b = new AllocBroadcaster<ReturnType<typeof alloc>>();
    const w = b.watch();
    const pending = w.next();
    b.close();
    expect(await pending).toBeUndefined();
    expect(await w.next()).toBeUndefined();
    expect(b.send(alloc(9))).toBe(false);
    expect(await b.watch().next()).toBeUndefined();
  });

  test("a closed watcher stops receiving without affecting others", async () => {
    const b = new AllocBroadcaster<ReturnType<typeof alloc>>();
    const [a, c] = [b.watch(), b.watch()];
    a.close();
    b.send(alloc(1));
    expect(await a.next()).toBeUndefined();
    expect(await c.next()).toEqual(alloc(1));
  });
});
