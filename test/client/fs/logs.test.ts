/** Reading a task's logs across rotated files: positions, plain bytes, Nomad frames, and following a live task. */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ReadableStreamDefaultReader } from "node:stream/web";
import { findLogPosition } from "../../../src/client/fs/log-position.ts";
import { logFileIndexes } from "../../../src/log-layout/layout.ts";
import { LogsNotFoundError, streamLogs, type LogsRequest } from "../../../src/client/fs/logs.ts";
import { tempDir } from "../../helpers/index.ts";
import { frameData, parseFrames } from "./frames.ts";
import { killLeftovers, lineNumbers, startWriter, supervise, taskLogDir } from "../../logmon/harness.ts";
import { DEFAULT_LOG_MAX_FILE_SIZE_MB, DEFAULT_LOG_MAX_FILES } from "../../../src/lib/log-config.ts";

afterAll(killLeftovers);

const root = tempDir("drover-fslogs-");
let dirs = 0;

/** A log dir holding web.stdout.<index> files with the given contents. */
function logDirWith(files: Record<number, string>): string {
  const dir = join(root, `logs-${dirs++}`);
  mkdirSync(dir, { recursive: true });
  for (const [index, content] of Object.entries(files)) writeFileSync(join(dir, `web.stdout.${index}`), content);
  return dir;
}

const request = (logDir: string, options: Partial<LogsRequest> = {}): LogsRequest => ({
  logDir,
  task: "web",
  type: "stdout",
  origin: "start",
  offset: 0,
  plain: true,
  follow: false,
  isTaskDead: () => true,
  ...options,
});

async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

describe("findLogPosition", () => {
  const dir = logDirWith({ 3: "a".repeat(100), 4: "b".repeat(100), 5: "c".repeat(40) });
  test.each([
    ["start", 0, { index: 3, offset: 0 }],
    ["start", 150, { index: 4, offset: 50 }],
    ["start", 200, { index: 4, offset: 100 }],
    ["start", 999, { index: 5, offset: 40 }],
    ["end", 0, { index: 5, offset: 40 }],
    ["end", 60, { index: 4, offset: 80 }],
    ["end", 999, { index: 3, offset: 0 }],
  ] as const)("origin %s, offset %d", (origin, offset, expected) => {
    expect(findLogPosition(dir, "web", "stdout", origin, offset)).toEqual(expected);
  });

  test("no files: no position", () => {
    expect(findLogPosition(logDirWith({}), "web", "stdout", "start", 0)).toBeNull();
  });
});

describe("streamLogs without follow", () => {
  const dir = logDirWith({ 0: "zero\n", 1: "one\n", 2: "two\n" });

  test("plain from the start reads every file in index order", async () => {
    expect(await new Response(streamLogs(request(dir))).text()).toBe("zero\none\ntwo\n");
  });

  test("origin end reads the last bytes across files", async () => {
    expect(await new Response(streamLogs(request(dir, { origin: "end", offset: 6 }))).text()).toBe("e\ntwo\n");
  });

  test("frames carry base64 data, the file relative to the alloc dir, and the offset past the data", async () => {
    const frames = parseFrames(await new Response(streamLogs(request(dir, { plain: false }))).text());
    expect(frames).toEqual([
      { Offset: 5, Data: Buffer.from("zero\n").toString("base64"), File: "alloc/logs/web.stdout.0" },
      { Offset: 4, Data: Buffer.from("one\n").toString("base64"), File: "alloc/logs/web.stdout.1" },
      { Offset: 4, Data: Buffer.from("two\n").toString("base64"), File: "alloc/logs/web.stdout.2" },
    ]);
  });

  test("a stream with no log files is not found", () => {
    expect(() => streamLogs(request(logDirWith({})))).toThrow(LogsNotFoundError);
  });

  test("a symlink the task planted among its log files is never read through", async () => {
    const secret = join(root, "secret");
    writeFileSync(secret, "root's secret\n");
    const planted = logDirWith({ 0: "zero\n", 2: "two\n" });
    symlinkSync(secret, join(planted, "web.stdout.1"));
    expect(await new Response(streamLogs(request(planted))).text()).toBe("zero\ntwo\n");
    expect(await new Response(streamLogs(request(planted, { follow: true }))).text()).toBe("zero\ntwo\n");
    const onlyLink = logDirWith({});
    symlinkSync(secret, join(onlyLink, "web.stdout.0"));
    expect(() => streamLogs(request(onlyLink))).toThrow(LogsNotFoundError);
  });
});

describe("streamLogs following a live task", () => {
  const { supervisor, client } = supervise(join(root, "logmon"));
  afterAll(() => supervisor.terminate());

  test("follows across rotations and ends, complete, once the task is dead", async () => {
    const { logDir, fifos } = taskLogDir(join(root, "alloc-follow"), "web");
    await client.register({ id: "follow/web", logDir, taskName: "web", maxFiles: 100, maxFileSizeMB: 1 });
    let dead = false;
    const text = new Response(streamLogs(request(logDir, { follow: true, isTaskDead: () => dead }))).text();
    // 3.5 MB of numbered lines: four files.
    const writer = startWriter(fifos.stdout, 35_000, { batch: 500, pauseMs: 1 });
    expect(await writer.exited).toEqual({ exitCode: 0, signal: 0 });
    // The task runner's order: flush, then report the task dead.
    await client.flush("follow/web");
    dead = true;
    const numbers = lineNumbers(await text);
    expect(logFileIndexes(logDir, "web", "stdout")).toEqual([0, 1, 2, 3]);
    expect(numbers.length).toBe(35_000);
    expect(numbers.every((n, i) => n === i)).toBe(true);
  }, 30_000);

  test("frames keep coming while the task is quiet: heartbeats, then the data", async () => {
    const { logDir, fifos } = taskLogDir(join(root, "alloc-quiet"), "web");
    await client.register({ id: "quiet/web", logDir, taskName: "web", maxFiles: DEFAULT_LOG_MAX_FILES, maxFileSizeMB: DEFAULT_LOG_MAX_FILE_SIZE_MB });
    let dead = false;
    const reader = streamLogs(request(logDir, { follow: true, plain: false, isTaskDead: () => dead })).getReader();
    // The first frame of a quiet task is a heartbeat; the task writes only once it came, however late.
    const first = await reader.read();
    expect(parseFrames(new TextDecoder().decode(first.value))).toEqual([{}]);
    const writer = startWriter(fifos.stdout, 3, { width: 20 });
    await writer.exited;
    await client.flush("quiet/web");
    dead = true;
    const frames = parseFrames(await readRest(reader));
    expect(frameData(frames)).toBe(["00000000", "00000001", "00000002"].map((n) => `${n} ${"x".repeat(10)}\n`).join(""));
    expect(frames.filter((frame) => frame.File).every((frame) => frame.File === "alloc/logs/web.stdout.0")).toBe(true);
  }, 30_000);

  test("a cancelled follow stops reading", async () => {
    const dir = logDirWith({ 0: "only\n" });
    const abort = new AbortController();
    const reader = streamLogs(request(dir, { follow: true, isTaskDead: () => false, signal: abort.signal })).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe("only\n");
    const pending = reader.read();
    abort.abort();
    await reader.cancel();
    expect((await pending).done).toBe(true);
  });
});
