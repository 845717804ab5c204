/**
 * The artifact hook on its own: artifacts fetched from this test's HTTP
 * server (or a local file) into the task dir before the task starts,
 * checksums verified, archives unpacked, hostile archives refused, sizes
 * limited, failures retried, and nothing ever written outside the task dir.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "tar";
import { artifactHook, type ArtifactLimits } from "../../../src/client/taskrunner/hooks/artifact.ts";
import { taskDirHook } from "../../../src/client/taskrunner/hooks/task-dir.ts";
import type { TaskHook } from "../../../src/client/taskrunner/hooks/hook.ts";
import { tempDir } from "../../helpers/index.ts";
import { allocRunner, job, placeJob, task } from "../fixtures.ts";

/** Small limits, so a test sees the size limit and the retries without waiting. */
const LIMITS: ArtifactLimits = { attempts: 3, retryDelayMs: 10, maxBytes: 1024 };

const files = tempDir("drover-artifact-src-");
mkdirSync(join(files, "site"));
writeFileSync(join(files, "site", "index.html"), "<h1>from the archive</h1>");
await create({ gzip: true, file: join(files, "site.tar.gz"), cwd: files }, ["site"]);
const archive = readFileSync(join(files, "site.tar.gz"));
const HELLO = "hello from the server\n";
const sha256 = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");

/** One 512-byte ustar header; enough to write the hostile archives node-tar's own writer will not make. */
function tarHeader(name: string, type: string, size: number, linkname = ""): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100);
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write(" ".repeat(8), 148);
  header.write(type, 156);
  header.write(linkname, 157, 100);
  header.write("ustar\0", 257);
  header.write("00", 263);
  const sum = header.reduce((total, byte) => total + byte, 0);
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return header;
}

function tarOf(entries: { name: string; type?: "0" | "1" | "2"; data?: string; link?: string }[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = Buffer.from(entry.data ?? "");
    parts.push(tarHeader(entry.name, entry.type ?? "0", data.length, entry.link));
    if (data.length > 0) parts.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

const outside = tempDir("drover-artifact-outside-");
const HOSTILE: Record<string, Buffer> = {
  "dotdot.tar": tarOf([{ name: "../../../escaped.txt", data: "x" }]),
  "absolute.tar": tarOf([{ name: join(outside, "absolute.txt"), data: "x" }]),
  "symlink.tar": tarOf([{ name: "link", type: "2", link: outside }, { name: "link/through.txt", data: "x" }]),
  "relative-symlink.tar": tarOf([{ name: "up", type: "2", link: "../../../../../../.." }, { name: "up/through.txt", data: "x" }]),
  "hardlink.tar": tarOf([{ name: "hard", type: "1", link: "/etc/hostname" }]),
};

const requests = new Map<string, number>();
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    const path = new URL(request.url).pathname.slice(1);
    const seen = (requests.get(path) ?? 0) + 1;
    requests.set(path, seen);
    if (path === "hello.txt") return new Response(HELLO);
    if (path === "site.tar.gz") return new Response(archive);
    if (path === "flaky.txt") return seen <= 2 ? new Response("busy", { status: 503 }) : new Response("third time");
    if (path === "broken.txt") return new Response("no", { status: 500 });
    if (path === "big.bin") return new Response(Buffer.alloc(LIMITS.maxBytes + 1));
    if (path === "streamed.bin") {
      // No content-length: only the running count can stop it.
      return new Response(new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array(LIMITS.maxBytes)), c.enqueue(new Uint8Array(10)), c.close()) }));
    }
    const hostile = HOSTILE[path];
    if (hostile) return new Response(hostile);
    return new Response("not found", { status: 404 });
  },
});
afterAll(() => server.stop(true));
const url = (path: string) => `http://127.0.0.1:${server.port}/${path}`;

/** Runs a one-task job whose task block carries `blocks`, with the task_dir and artifact hooks. */
async function runWith(blocks: string, hooks: TaskHook[] = [taskDirHook({ secretsTmpfs: false }), artifactHook(LIMITS)]) {
  const [alloc] = await placeJob(job([task("t", "exit:0", blocks)]));
  const fixture = allocRunner(alloc!, { taskHooks: () => hooks });
  await fixture.runner.run();
  const state = fixture.runner.taskStates().t!;
  return { ...fixture, state, taskDir: fixture.runner.allocDir.taskDir("t").root };
}

const artifact = (source: string, extra = "") => `artifact {\n source = "${source}"\n ${extra}\n }`;
const failure = (state: { Events: { Type: string; DownloadError?: string }[] }) => state.Events.find((event) => event.Type === "Failed Artifact Download")?.DownloadError;

describe("the artifact hook", () => {
  test("fetches a file over http into the destination, checksum verified, with the mode asked for", async () => {
    const { state, taskDir, driver } = await runWith(artifact(url("hello.txt"), `destination = "local/files"\n options {\n checksum = "sha256:${sha256(HELLO)}"\n mode = "0750"\n }`));
    expect(state.Failed).toBe(false);
    expect(state.Events.map((event) => event.Type)).toContain("Downloading Artifacts");
    expect(readFileSync(join(taskDir, "local/files/hello.txt"), "utf8")).toBe(HELLO);
    expect(statSync(join(taskDir, "local/files/hello.txt")).mode & 0o777).toBe(0o750);
    expect(driver.calls).toEqual(["start t"]);
  });

  test("a tar.gz is unpacked into the destination; mode \"file\" keeps it whole; a local file is copied", async () => {
    const { taskDir } = await runWith(
      [
        artifact(url("site.tar.gz"), 'destination = "local/www"'),
        artifact(url("site.tar.gz"), 'destination = "local/kept.tar.gz"\n mode = "file"'),
        artifact(join(files, "site", "index.html"), 'destination = "local/copy"'),
      ].join("\n"),
    );
    expect(readFileSync(join(taskDir, "local/www/site/index.html"), "utf8")).toBe("<h1>from the archive</h1>");
    expect(readFileSync(join(taskDir, "local/kept.tar.gz"))).toEqual(archive);
    expect(readFileSync(join(taskDir, "local/copy/index.html"), "utf8")).toBe("<h1>from the archive</h1>");
  });

  test("a checksum mismatch fails the task, naming both sums, and leaves nothing in the task dir", async () => {
    const wrong = "0".repeat(64);
    const { state, taskDir, driver } = await runWith(artifact(url("hello.txt"), `destination = "local"\n options {\n checksum = "sha256:${wrong}"\n }`));
    expect(failure(state)).toBe(`failed to download artifact "${url("hello.txt")}": checksum mismatch: sha256 is ${sha256(HELLO)}, expected ${wrong}`);
    expect(state.Failed).toBe(true);
    expect(driver.calls).toEqual([]);
    expect(readdirSync(join(taskDir, "local"))).toEqual([]);
    expect(readdirSync(join(taskDir, "tmp"))).toEqual([]);
  });

  for (const name of Object.keys(HOSTILE)) {
    test(`an archive with ${name.replace(".tar", "")} entries is refused, and nothing lands outside its destination`, async () => {
      const { state, taskDir } = await runWith(artifact(url(name), 'destination = "local/unpacked"'));
      expect(failure(state)).toStartWith(`failed to download artifact "${url(name)}": `);
      expect(readdirSync(outside)).toEqual([]);
      expect(existsSync(join(taskDir, "escaped.txt"))).toBe(false);
      expect(existsSync(join(taskDir, "..", "escaped.txt"))).toBe(false);
    });
  }

  test("an artifact larger than the limit is refused, whether its size is declared, streamed, or a local file's", async () => {
    const local = join(files, "large.bin");
    writeFileSync(local, Buffer.alloc(LIMITS.maxBytes + 1));
    for (const source of [url("big.bin"), url("streamed.bin"), local]) {
      const { state, taskDir } = await runWith(artifact(source, 'destination = "local"'));
      expect(failure(state)).toEndWith(`${source} is larger than ${LIMITS.maxBytes} bytes`);
      expect(readdirSync(join(taskDir, "local"))).toEqual([]);
    }
  });

  test("a failing server is retried: answering on the third try is a success; never answering fails after the last try", async () => {
    const flaky = await runWith(artifact(url("flaky.txt"), 'destination = "local"'));
    expect(flaky.state.Failed).toBe(false);
    expect(readFileSync(join(flaky.taskDir, "local/flaky.txt"), "utf8")).toBe("third time");
    expect(requests.get("flaky.txt")).toBe(3);

    const broken = await runWith(artifact(url("broken.txt"), 'destination = "local"'));
    expect(failure(broken.state)).toBe(`failed to download artifact "${url("broken.txt")}": GET ${url("broken.txt")}: 500 Internal Server Error`);
    expect(requests.get("broken.txt")).toBe(LIMITS.attempts);
  });

  test("a destination that climbs out, or leads out through a symlink the task left, is refused", async () => {
    const planted = tempDir("drover-artifact-planted-");
    const plant: TaskHook = { name: "plant", prestart: async (req) => void symlinkSync(planted, join(req.taskDir.local, "out")) };
    const { state } = await runWith(artifact(url("hello.txt"), 'destination = "local/out"'), [taskDirHook({ secretsTmpfs: false }), plant, artifactHook(LIMITS)]);
    expect(failure(state)).toEndWith('destination "local/out" leads outside the task directory');
    expect(readdirSync(planted)).toEqual([]);
  });
});
