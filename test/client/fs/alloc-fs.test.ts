import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../../../src/api/app.ts";
import { clientFsRoutes } from "../../../src/api/routes/client-fs.ts";
import { AllocFs, AllocFsError } from "../../../src/client/fs/alloc-fs.ts";
import { mkfifo } from "../../../src/runtime/libc.ts";
import { tempDir, waitFor } from "../../helpers/index.ts";
import { frameData, parseFrames } from "./frames.ts";

/** An alloc dir in Nomad's layout with the traps a task could set. */
function allocDir(): string {
  const root = tempDir("drover-allocfs-");
  const outside = tempDir("drover-allocfs-outside-");
  writeFileSync(join(outside, "host-secret"), "host\n");
  for (const dir of ["alloc/logs", "alloc/data", "web/local", "web/secrets"]) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, "web/local/out.txt"), "line1\nline2\nline3\n");
  // Opened by one test only, so no other test's handle (closed whenever the collector runs) can be counted.
  writeFileSync(join(root, "web/local/cancelled.txt"), "never read\n");
  writeFileSync(join(root, "web/local/conf.json"), '{"a":1}');
  writeFileSync(join(root, "web/local/blob"), Buffer.from([0, 1, 2, 3, 0xff]));
  writeFileSync(join(root, "web/secrets/token"), "s3cret\n");
  symlinkSync(join(outside, "host-secret"), join(root, "alloc/data/file-out"));
  symlinkSync(outside, join(root, "alloc/data/dir-out"));
  symlinkSync("../../web/local/out.txt", join(root, "alloc/data/file-in"));
  symlinkSync("../../web/secrets", join(root, "alloc/data/secrets-in"));
  expect(mkfifo(join(root, "alloc/logs/.web.stdout.fifo"), 0o600)).toBe(0);
  return root;
}

const text = (stream: ReadableStream<Uint8Array>) => new Response(stream).text();
const refusal = async (promise: Promise<unknown>) => {
  const err = await promise.then(() => null, (caught: unknown) => caught);
  expect(err).toBeInstanceOf(AllocFsError);
  return { status: (err as AllocFsError).status, message: (err as AllocFsError).message };
};

describe("an alloc dir through the fs endpoints", () => {
  const root = allocDir();
  const fs = new AllocFs(root);
  const read = (path: string, options: Partial<Parameters<AllocFs["read"]>[1]> = {}) =>
    fs.read(path, { offset: 0, origin: "start", limit: 0, plain: true, follow: false, ...options });

  test("ls: entries by name with Go's modes; symlinks shown as links, not followed", async () => {
    const entries = await fs.list("/");
    expect(entries.map((entry) => [entry.Name, entry.IsDir])).toEqual([
      ["alloc", true],
      ["web", true],
    ]);
    const data = await fs.list("alloc/data");
    expect(data.map((entry) => entry.FileMode.slice(0, 1))).toEqual(["L", "L", "L", "L"]);
    expect((await fs.list("alloc/logs"))[0]).toMatchObject({ Name: ".web.stdout.fifo", FileMode: "prw-------", IsDir: false });
    expect((await fs.list("web/local")).find((entry) => entry.Name === "out.txt")).toMatchObject({ Size: 18, FileMode: "-rw-r--r--" });
    // Listing secrets is allowed (as in Nomad); reading them is not.
    expect((await fs.list("web/secrets")).map((entry) => entry.Name)).toEqual(["token"]);
  });

  test("stat: follows links that stay inside; guesses text, JSON, binary", async () => {
    expect(await fs.stat("web/local/out.txt")).toMatchObject({ Name: "out.txt", Size: 18, ContentType: "text/plain; charset=utf-8" });
    expect((await fs.stat("web/local/conf.json")).ContentType).toBe("application/json");
    expect((await fs.stat("web/local/blob")).ContentType).toBe("application/octet-stream");
    expect(await fs.stat("alloc/data/file-in")).toMatchObject({ Name: "out.txt", IsDir: false });
    expect(await fs.stat("/")).toMatchObject({ Name: "/", IsDir: true });
  });

  test("cat and readat: the bytes, from an offset, up to a limit", async () => {
    expect(await text(await read("web/local/out.txt"))).toBe("line1\nline2\nline3\n");
    expect(await text(await read("web/local/out.txt", { offset: 6, limit: 5 }))).toBe("line2");
    expect(await text(await read("web/local/out.txt", { offset: 6, origin: "end" }))).toBe("line3\n");
    expect(await text(await read("alloc/data/file-in"))).toBe("line1\nline2\nline3\n");
  });

  test("a stream cancelled before it is read closes its file", async () => {
    const openOnFile = () =>
      readdirSync("/proc/self/fd").filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).endsWith("web/local/cancelled.txt");
        } catch {
          return false;
        }
      }).length;
    expect(openOnFile()).toBe(0);
    const stream = await read("web/local/cancelled.txt");
    expect(openOnFile()).toBe(1);
    await stream.cancel();
    expect(openOnFile()).toBe(0);
  });

  test("nothing outside the alloc dir: .. (Nomad's rule: leaving it at any point), symlinks out (file or dir)", async () => {
    for (const path of ["../..", "web/../../x", "/../web/local/out.txt", "alloc/data/file-out", "alloc/data/dir-out/host-secret", "alloc/data/dir-out"]) {
      expect(await refusal(fs.stat(path))).toMatchObject({ status: 400, message: expect.stringContaining("Path escapes the alloc directory") });
      expect((await refusal(read(path))).status).toBe(400);
    }
    expect((await refusal(fs.list("alloc/data/dir-out"))).status).toBe(400);
    // ".." that stays inside is fine.
    expect(await text(await read("alloc/../web/local/out.txt"))).toBe("line1\nline2\nline3\n");
  });

  test("a task's secrets cannot be read, however they are named; other refusals have their status", async () => {
    for (const path of ["web/secrets/token", "alloc/data/secrets-in/token", "web/local/../secrets/token"]) {
      expect(await refusal(read(path))).toEqual({ status: 403, message: `Reading secret file prohibited: ${path}` });
    }
    expect(await refusal(read("web/local/missing"))).toEqual({ status: 404, message: "stat web/local/missing: no such file or directory" });
    expect((await refusal(read("web/local"))).message).toBe('file "web/local" is a directory');
    // A FIFO the task made is refused at once, never waited on.
    expect((await refusal(read("alloc/logs/.web.stdout.fifo"))).message).toBe('file "alloc/logs/.web.stdout.fifo" is not a regular file');
  });

  test("stream: frames from the end, new bytes as they come, truncation and deletion", async () => {
    const path = join(root, "alloc/data/grow.log");
    writeFileSync(path, "old\n");
    const controller = new AbortController();
    const stream = await fs.read("alloc/data/grow.log", { offset: 0, origin: "end", limit: 0, plain: false, follow: true, signal: controller.signal });
    const reader = stream.getReader();
    let seen = "";
    const until = async (what: string, check: () => boolean) => {
      await waitFor(what, async () => {
        if (check()) return true;
        const { value } = await reader.read();
        if (value) seen += new TextDecoder().decode(value);
        return check();
      });
    };
    appendFileSync(path, "new\n");
    await until("the appended line", () => frameData(parseFrames(seen)) === "new\n");
    truncateSync(path, 0);
    await until("the truncation", () => parseFrames(seen).some((frame) => frame.FileEvent === "file truncated"));
    rmSync(path);
    await until("the deletion", () => parseFrames(seen).some((frame) => frame.FileEvent === "file deleted"));
    expect(parseFrames(seen).every((frame) => frame.File === undefined || frame.File === "alloc/data/grow.log")).toBe(true);
    expect((await reader.read()).done).toBe(true);
  });

  test("the routes: Nomad's errors for a missing path or an alloc not on this node", async () => {
    const app = createApp(pino({ level: "silent" }), [clientFsRoutes((id) => (id === "here" ? root : null))]);
    const cat = await app.request("/v1/client/fs/cat/here?path=web/local/out.txt");
    expect(cat.headers.get("Content-Type")).toStartWith("text/plain");
    expect(await cat.text()).toBe("line1\nline2\nline3\n");
    expect(await (await app.request("/v1/client/fs/readat/here?path=web/local/out.txt&offset=12&limit=-1")).text()).toBe("line3\n");
    const missing = await app.request("/v1/client/fs/cat/here");
    expect([missing.status, await missing.text()]).toEqual([400, "must provide a file name"]);
    expect((await app.request("/v1/client/fs/ls/elsewhere")).status).toBe(404);
    expect((await app.request("/v1/client/fs/stream/here?path=web/local/out.txt&origin=middle")).status).toBe(400);
    // Nomad's stream says 400 for a file it cannot stat (client/fs_endpoint.go); cat and stat say 404.
    const gone = await app.request("/v1/client/fs/stream/here?path=web/local/gone.txt");
    expect([gone.status, await gone.text()]).toEqual([400, "stat web/local/gone.txt: no such file or directory"]);
    expect((await app.request("/v1/client/fs/cat/here?path=web/local/gone.txt")).status).toBe(404);
    const secret = await app.request("/v1/client/fs/cat/here?path=web/secrets/token");
    expect(secret.status).toBe(403);
    expect(await secret.text()).not.toContain("s3cret");
    const ls = (await (await app.request("/v1/client/fs/ls/here")).json()) as { Name: string }[];
    expect(ls.map((entry) => entry.Name)).toEqual(["alloc", "web"]);
  });
});
