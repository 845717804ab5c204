/**
 * The server list: failover moves a failed server to the back, a
 * heartbeat's list replaces the order but keeps the configured servers, and
 * the one in use stays first.
 */
import { expect, test } from "bun:test";
import { ServerList } from "../../src/nomad-servers/servers.ts";

test("a failed server goes to the back", () => {
  const list = new ServerList(["a:4647", "b:4647"]);
  list.failed("a:4647");
  expect(list.all()).toEqual(["b:4647", "a:4647"]);
});

test("a heartbeat's servers join the list; the configured ones stay; the current one stays first", () => {
  const list = new ServerList(["a:4647"]);
  list.update(["c:4647", "a:4647", "b:4647"]);
  expect(list.all()).toEqual(["a:4647", "c:4647", "b:4647"]);
  list.failed("a:4647");
  list.update(["c:4647"]);
  expect(list.all()).toEqual(["c:4647", "a:4647"]);
});

test("an empty heartbeat list changes nothing; no servers at all is refused", () => {
  const list = new ServerList(["a:4647"]);
  list.update([]);
  expect(list.all()).toEqual(["a:4647"]);
  expect(() => new ServerList([])).toThrow(/no Nomad servers/);
});
