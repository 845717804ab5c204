/** The JSON-lines RPC over unix sockets: a peer that breaks the protocol ends its connection, never the process. */
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import * as v from "valibot";
import { RpcClient, RpcConnectionError, RpcRemoteError } from "../../src/rpc/client.ts";
import { LineBuffer, MAX_LINE_BYTES } from "../../src/rpc/protocol.ts";
import { serveRpc } from "../../src/rpc/server.ts";
import { connectUnix, listenUnix } from "../../src/runtime/unix.ts";
import { tempDir } from "../helpers/index.ts";

const PROTOCOL = { echo: { params: v.object({ text: v.string() }), result: v.object({ text: v.string() }) } };
const dir = tempDir("drover-rpc-");
const socket = join(dir, "echo.sock");
const server = serveRpc(socket, PROTOCOL, { echo: ({ text }) => ({ text }) });
afterAll(() => server.stop());

/** Writes `line` on a raw connection; resolves with what came back once the server closed it. */
async function rawExchange(line: string): Promise<string> {
  let received = "";
  let closed!: () => void;
  const done = new Promise<void>((resolve) => (closed = resolve));
  const conn = await connectUnix(socket, { data: (_conn, chunk) => void (received += chunk), close: () => closed() });
  conn.write(`${line}\n`);
  await done;
  return received;
}

test.each(["null", "[]", "7", '{"id":1}', '{"method":"echo"}', "{not json"])("a request line %p ends that connection and nothing else", async (line) => {
  expect(await rawExchange(line)).toBe("");
  const client = await RpcClient.connect(socket, PROTOCOL);
  expect(await client.call("echo", { text: "still serving" })).toEqual({ text: "still serving" });
  client.close();
});

test("a method name that is an Object.prototype key is an unknown method", async () => {
  let received = "";
  const conn = await connectUnix(socket, { data: (_conn, chunk) => void (received += chunk) });
  conn.write(`${JSON.stringify({ id: 1, method: "constructor", params: {} })}\n`);
  const client = await RpcClient.connect(socket, PROTOCOL);
  await client.call("echo", { text: "sync" });
  client.close();
  await new Promise<void>((resolve) => {
    const poll = () => (received.includes("\n") ? resolve() : setImmediate(poll));
    poll();
  });
  conn.end();
  expect(JSON.parse(received)).toEqual({ id: 1, error: { message: 'unknown method "constructor"' } });
});

test("an answer that is not a response fails the calls in flight with the reason", async () => {
  const path = join(dir, "garbage.sock");
  const garbage = listenUnix(path, { data: (conn) => conn.write('{"result":1}\n') });
  try {
    const client = await RpcClient.connect(path, PROTOCOL);
    const call = client.call("echo", { text: "x" });
    const err = await call.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RpcConnectionError);
    expect(String(err)).toMatch(/malformed RPC response: .*id/);
    await client.closedPromise();
  } finally {
    garbage.stop();
  }
});

test("an answer of the wrong shape is the remote's error; the connection stays", async () => {
  const path = join(dir, "wrong.sock");
  const wrong = listenUnix(path, {
    data: (conn, chunk) => {
      for (const line of chunk.split("\n").filter(Boolean)) conn.write(`${JSON.stringify({ id: JSON.parse(line).id, result: { text: 5 } })}\n`);
    },
  });
  try {
    const client = await RpcClient.connect(path, PROTOCOL);
    expect(await client.call("echo", { text: "x" }).catch((e: unknown) => e)).toBeInstanceOf(RpcRemoteError);
    expect(client.isClosed).toBe(false);
    client.close();
  } finally {
    wrong.stop();
  }
});

test("lines are whole however the stream cuts them", () => {
  const text = `first\n\n${"long".repeat(50_000)}\nlast\npartial`;
  for (const size of [1, 7, 4096, text.length]) {
    const buffer = new LineBuffer();
    const lines: string[] = [];
    for (let at = 0; at < text.length; at += size) lines.push(...buffer.push(text.slice(at, at + size)));
    expect(lines).toEqual(["first", "long".repeat(50_000), "last"]);
    expect(buffer.push("\n")).toEqual(["partial"]);
  }
});

test("a line longer than the limit is refused before it is complete", () => {
  const buffer = new LineBuffer();
  const piece = "x".repeat(1 << 20);
  expect(() => {
    for (let i = 0; i <= MAX_LINE_BYTES / piece.length; i++) buffer.push(piece);
  }).toThrow(/RPC line longer than/);
});

test("calls made in one turn reach the peer in one write, each answered in order; a call just before close still goes", async () => {
  const path = join(dir, "count.sock");
  const chunks: string[] = [];
  const lines = new LineBuffer();
  const counting = listenUnix(path, {
    data: (conn, chunk) => {
      chunks.push(chunk);
      for (const line of lines.push(chunk)) conn.write(`${JSON.stringify({ id: JSON.parse(line).id, result: JSON.parse(line).params })}\n`);
    },
  });
  try {
    const client = await RpcClient.connect(path, PROTOCOL);
    const texts = Array.from({ length: 50 }, (_, i) => `call ${i}`);
    expect(await Promise.all(texts.map((text) => client.call("echo", { text })))).toEqual(texts.map((text) => ({ text })));
    expect(chunks.length).toBe(1);
    void client.call("echo", { text: "last" }).catch(() => undefined);
    client.close();
    await new Promise<void>((resolve) => {
      const poll = () => (chunks.join("").includes('"last"') ? resolve() : setImmediate(poll));
      poll();
    });
  } finally {
    counting.stop();
  }
});

test("answerTo hands the answer to the object's methods; a closed connection fails it, never before the call returns", async () => {
  const client = await RpcClient.connect(socket, PROTOCOL);
  const heard: string[] = [];
  let wake!: () => void;
  const answer = {
    answered: (value: { text: string }) => (heard.push(`answered ${value.text}`), wake()),
    failed: (err: Error) => (heard.push(`failed ${err instanceof RpcConnectionError}`), wake()),
  };
  await new Promise<void>((resolve) => {
    wake = resolve;
    client.answerTo("echo", { text: "hi" }, answer);
  });
  client.close();
  await new Promise<void>((resolve) => {
    wake = resolve;
    client.answerTo("echo", { text: "late" }, answer);
    heard.push("returned");
  });
  expect(heard).toEqual(["answered hi", "returned", "failed true"]);
});
