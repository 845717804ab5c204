/**
 * The node's advertised HTTP address: one other hosts can dial, even when
 * the API listens on every interface.
 */
import { expect, test } from "bun:test";
import { reachableHttpAddr } from "../../src/client/node.ts";

test("an API bound to every interface is advertised at the node's address; a real address is kept", () => {
  expect(reachableHttpAddr("0.0.0.0:4646", "10.0.0.12")).toBe("10.0.0.12:4646");
  expect(reachableHttpAddr("[::]:4646", "10.0.0.12")).toBe("10.0.0.12:4646");
  expect(reachableHttpAddr("127.0.0.1:5656", "10.0.0.12")).toBe("127.0.0.1:5656");
  expect(reachableHttpAddr("node-7.example:4646", "10.0.0.12")).toBe("node-7.example:4646");
});
