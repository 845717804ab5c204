/** GET /v1/client/fs/logs/:alloc_id as a Nomad client calls it. */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../../../src/api/app.ts";
import { fsLogsRoutes, type TaskLogState } from "../../../src/api/routes/client-logs.ts";
import { tempDir } from "../../helpers/index.ts";
import { frameData, parseFrames } from "./frames.ts";

const allocDir = tempDir("drover-fsroute-");
const logDir = join(allocDir, "alloc", "logs");
mkdirSync(logDir, { recursive: true });
writeFileSync(join(logDir, "web.stdout.0"), "first file\n");
writeFileSync(join(logDir, "web.stdout.1"), "second file\n");
writeFileSync(join(logDir, "web.stderr.0"), "oops\n");

const states: Record<string, TaskLogState> = { web: "dead", sidecar: "pending", idle: "running" };
const app = createApp(pino({ level: "silent" }), [
  fsLogsRoutes({
    resolveLogDir: (allocId) => (allocId === "a1" ? logDir : null),
    taskState: (_allocId, task) => states[task] ?? null,
  }),
]);

const get = (query: string, allocId = "a1") => app.request(`/v1/client/fs/logs/${allocId}?${query}`);

describe("GET /v1/client/fs/logs/:alloc_id", () => {
  test("plain=true streams the bytes of every rotated file", async () => {
    const res = await get("task=web&type=stdout&plain=true");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("text/plain");
    expect(await res.text()).toBe("first file\nsecond file\n");
  });

  test("without plain, Nomad's stream frames", async () => {
    const res = await get("task=web&type=stderr");
    expect(res.headers.get("content-type")).toStartWith("application/json");
    const frames = parseFrames(await res.text());
    expect(frames).toEqual([{ Offset: 5, Data: Buffer.from("oops\n").toString("base64"), File: "alloc/logs/web.stderr.0" }]);
  });

  test("origin=end with an offset reads the tail across files; Go boolean spellings work", async () => {
    expect(await (await get("task=web&type=stdout&origin=end&offset=15&plain=T")).text()).toBe("le\nsecond file\n");
    expect(frameData(parseFrames(await (await get("task=web&type=stdout&origin=end&offset=4&plain=0")).text()))).toBe("ile\n");
  });

  test("follow on a dead task ends after its last byte", async () => {
    expect(await (await get("task=web&type=stdout&plain=true&follow=true")).text()).toBe("first file\nsecond file\n");
  });

  test.each([
    ["type=stdout", "must provide task name"],
    ["task=web", "must provide log type (stdout/stderr)"],
    ["task=web&type=stdlog", "must provide log type (stdout/stderr)"],
    ["task=web&type=stdout&origin=middle", "origin must be start or end"],
    ["task=web&type=stdout&offset=-3", "offset: must be a non-negative integer"],
    ["task=web&type=stdout&follow=maybe", "follow: must be true or false"],
  ])("400 for %s", async (query, error) => {
    const res = await get(query);
    expect(res.status).toBe(400);
    expect(await res.text()).toBe(error);
  });

  test.each([
    ["an alloc not on this node", "task=web&type=stdout", "nope", 'unknown allocation "nope"'],
    ["a task the alloc does not have", "task=db&type=stdout", "a1", 'unknown task name "db"'],
    ["a task not started yet", "task=sidecar&type=stdout", "a1", 'task "sidecar" not started yet. No logs available'],
    ["a task with no log files", "task=idle&type=stdout", "a1", 'log entry for task "idle" and log type "stdout" not found'],
  ])("404 for %s", async (_what, query, allocId, error) => {
    const res = await get(query, allocId);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe(error);
  });
});
