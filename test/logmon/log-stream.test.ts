import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdirSync, readFileSync, readdirSync, readlinkSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { openTaskOutput, type TaskOutput } from "../../src/executor/stdio.ts";
import { createTaskFifos, openFifo } from "../../src/log-layout/fifo.ts";
import { LINE_WINDOW, LogStream, Scratch } from "../../src/logmon/log-stream.ts";
import { stageFifoPath } from "../../src/log-layout/layout.ts";
import { mkfifo, SPLICE_F_NONBLOCK, splicePipes } from "../../src/runtime/libc.ts";
import { tempDir, waitFor } from "../helpers/index.ts";

const MiB = 1024 * 1024;
const root = tempDir("drover-logstream-");
const scratch = new Scratch();
let opened: { stream: LogStream; outputs: TaskOutput[] }[] = [];

afterEach(() => {
  for (const { stream, outputs } of opened) {
    stream.close();
    for (const output of outputs) output.close();
  }
  opened = [];
});

let dirCount = 0;
/** A fresh alloc/logs dir with the task's FIFOs, a stream reading stdout, and the task's end and spares opened by the executor's own code. */
function setup(limits = { maxFiles: 10, maxFileSizeMB: 1 }, prepare?: (logDir: string) => void) {
  const logDir = join(root, `alloc${dirCount++}`, "logs");
  mkdirSync(logDir, { recursive: true });
  prepare?.(logDir);
  const fifos = createTaskFifos(logDir, "web");
  const output = openTaskOutput(fifos.stdout);
  const writer = output.taskFd;
  const stream = new LogStream(logDir, "web", "stdout", limits, scratch);
  stream.open();
  opened.push({ stream, outputs: [output] });
  /** Writes `data` (in pieces that fit the pipe) and moves it all into the files. */
  const feed = (data: string | Buffer) => {
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    for (let at = 0; at < bytes.length; at += 32 * 1024) {
      writeSync(writer, bytes.subarray(at, Math.min(at + 32 * 1024, bytes.length)));
      stream.move(1 << 20);
    }
    stream.flush();
  };
  /** Writes `data` (less than the 1 MiB pipe) in one go, then moves it. */
  const put = (data: string) => {
    writeSync(writer, data);
    stream.flush();
  };
  const files = () =>
    readdirSync(logDir)
      .filter((name) => name.startsWith("web.stdout."))
      .map((name) => Number(name.slice("web.stdout.".length)))
      .sort((a, b) => a - b)
      .map((index) => ({ index, content: readFileSync(join(logDir, `web.stdout.${index}`)) }));
  return { logDir, feed, put, files, stream };
}

/** Numbered lines of exactly `width` bytes, newline included. */
function lines(count: number, width = 100, from = 0): string {
  let out = "";
  for (let i = from; i < from + count; i++) out += `${String(i).padStart(8, "0")} ${"x".repeat(width - 10)}\n`;
  return out;
}

describe("rotation", () => {
  test("files end on line boundaries at the size limit, and nothing is lost", () => {
    const { feed, files } = setup();
    const input = lines(26_000); // 2.6 MB of 100-byte lines
    feed(input);
    const got = files();
    expect(got.map((f) => f.index)).toEqual([0, 1, 2]);
    for (const file of got.slice(0, 2)) {
      expect(file.content.at(-1)).toBe(0x0a);
      // Within one line of the limit: the last line that fits, or the one that crossed it.
      expect(Math.abs(file.content.length - MiB)).toBeLessThan(100);
      expect(file.content.length % 100).toBe(0);
    }
    expect(Buffer.concat(got.map((f) => f.content)).toString()).toBe(input);
  });

  test("with data already waiting, a file takes the last line that fits whole", () => {
    const { feed, put, files } = setup();
    const input = lines(12_000);
    feed(input.slice(0, 1_000_000));
    // The rest (past the limit) waits in the pipe at once.
    put(input.slice(1_000_000));
    expect(files()[0]!.content.length).toBe(1_048_500);
  });

  test("a line longer than the window arriving piecemeal is cut at most a window past the limit", () => {
    const { feed, files } = setup();
    const input = `${lines(10_000)}${"y".repeat(LINE_WINDOW * 2)}\n${lines(3)}`;
    feed(input);
    const got = files();
    expect(got[0]!.content.length).toBe(MiB + LINE_WINDOW);
    expect(Buffer.concat(got.map((f) => f.content)).toString()).toBe(input);
  });

  test("a line longer than the window seen whole is cut exactly at the limit", () => {
    const { feed, put, files } = setup();
    const head = `${lines(10_484)}${"a".repeat(50)}`;
    const longLine = `${"b".repeat(LINE_WINDOW * 2)}\n`;
    feed(head);
    put(longLine);
    const got = files();
    expect(got[0]!.content.length).toBe(MiB);
    expect(Buffer.concat(got.map((f) => f.content)).toString()).toBe(head + longLine);
  });

  test("when the next line would not fit and the file ends a line, the line starts the next file whole", () => {
    const { feed, files } = setup();
    const head = lines(10_480); // 1,048,000 bytes: 576 left, inside the window
    const next = `${"z".repeat(999)}\n`;
    feed(head);
    feed(next);
    const got = files();
    expect(got[0]!.content.toString()).toBe(head);
    expect(got[1]!.content.toString()).toBe(next);
  });

  test("continues the highest existing index after a restart", () => {
    const { feed, files } = setup(undefined, (logDir) => {
      writeFileSync(join(logDir, "web.stdout.2"), "old 2\n");
      writeFileSync(join(logDir, "web.stdout.3"), "old 3\n");
    });
    feed("new line\n");
    expect(files().map((f) => [f.index, f.content.toString()])).toEqual([
      [2, "old 2\n"],
      [3, "old 3\nnew line\n"],
    ]);
  });

  test("keeps at most MaxFiles files, deleting the oldest", () => {
    const { feed, files } = setup({ maxFiles: 2, maxFileSizeMB: 1 });
    const input = lines(52_000); // ~5 MB: indexes 0..4
    feed(input);
    const got = files();
    expect(got.map((f) => f.index)).toEqual([3, 4]);
    expect(got.reduce((sum, f) => sum + f.content.length, 0)).toBeLessThanOrEqual(2 * (MiB + 100));
    expect(input.endsWith(Buffer.concat(got.map((f) => f.content)).toString())).toBe(true);
  });

  test("a FIFO a task planted under an old file's name is deleted like the file, without blocking the stream", () => {
    const { feed, files, logDir } = setup({ maxFiles: 2, maxFileSizeMB: 1 }, (logDir) => {
      expect(mkfifo(join(logDir, "web.stdout.0"), 0o600)).toBe(0);
      writeFileSync(join(logDir, "web.stdout.1"), "old 1\n");
    });
    feed(lines(12_000)); // ~1.2 MB: rotates to index 2, so index 0 goes
    expect(existsSync(join(logDir, "web.stdout.0"))).toBe(false);
    expect(files().map((f) => f.index)).toEqual([1, 2]);
  });

  test("a lowered MaxFiles prunes the surplus at the next open", () => {
    const { files } = setup({ maxFiles: 2, maxFileSizeMB: 1 }, (logDir) => {
      for (const index of [0, 1, 2, 3, 900]) writeFileSync(join(logDir, `web.stdout.${index}`), `${index}\n`);
    });
    expect(files().map((f) => f.index)).toEqual([900]);
  });
});

describe("symlinks planted in the log dir", () => {
  test("a symlink in place of the live log file is refused and its target untouched", () => {
    const target = join(root, "precious");
    writeFileSync(target, "keep me\n");
    expect(() =>
      setup(undefined, (logDir) => {
        symlinkSync(target, join(logDir, "web.stdout.0"));
      }),
    ).toThrow();
    expect(readFileSync(target, "utf8")).toBe("keep me\n");
    expect(statSync(target).size).toBe(8);
    expect(existsSync(target)).toBe(true);
  });
});

describe("the staging FIFO", () => {
  /** How many of this process's descriptors are open on `path`. */
  const descriptorsOn = (path: string) => readdirSync("/proc/self/fd").filter((fd) => safeReadlink(`/proc/self/fd/${fd}`) === path).length;

  test("bytes a killed logmon left between its two moves land first, then the FIFO's: none lost, none doubled", () => {
    const logDir = join(root, `alloc${dirCount++}`, "logs");
    const fifos = createTaskFifos(logDir, "web");
    const output = openTaskOutput(fifos.stdout);
    writeSync(output.taskFd, lines(200));
    // The killed logmon's first move: 100 lines out of the FIFO into the stage, then its descriptors close.
    const dead = [openFifo(fifos.stdout, "reader"), openFifo(stageFifoPath(fifos.stdout), "reader")];
    expect(splicePipes(dead[0]!, dead[1]!, 100 * 100, SPLICE_F_NONBLOCK)).toBe(100 * 100);
    for (const fd of dead) closeSync(fd);

    const stream = new LogStream(logDir, "web", "stdout", { maxFiles: 10, maxFileSizeMB: 1 }, scratch);
    stream.open();
    opened.push({ stream, outputs: [output] });
    stream.flush();
    expect(readFileSync(join(logDir, "web.stdout.0"), "utf8")).toBe(lines(200));
  });

  test.skipIf(process.getuid?.() !== 0)("a full disk stops the copy out of the stage with the error, and once there is room every byte lands, in order, once", () => {
    const logDir = join(root, `alloc${dirCount++}`, "logs");
    mkdirSync(logDir, { recursive: true });
    const mount = (...args: string[]) => expect(spawnSync("mount", args).status).toBe(0);
    mount("-t", "tmpfs", "-o", "size=256k", "tmpfs", logDir);
    try {
      const fifos = createTaskFifos(logDir, "web");
      const output = openTaskOutput(fifos.stdout);
      const stream = new LogStream(logDir, "web", "stdout", { maxFiles: 10, maxFileSizeMB: 1 }, scratch);
      stream.open();
      opened.push({ stream, outputs: [output] });
      const input = lines(5_000); // 500 KB: the pipe holds it, the 256 KiB file system does not
      writeSync(output.taskFd, input);
      expect(() => stream.flush()).toThrow(/ENOSPC/);
      expect(readFileSync(join(logDir, "web.stdout.0"), "utf8").length).toBeLessThan(input.length);

      mount("-o", "remount,size=4m", logDir);
      stream.flush();
      expect(readFileSync(join(logDir, "web.stdout.0"), "utf8")).toBe(input);
    } finally {
      for (const { stream, outputs } of opened.splice(0)) {
        stream.close();
        for (const each of outputs) each.close();
      }
      spawnSync("umount", [logDir]);
    }
  });

  test("a stage no other process holds is not used (its bytes would die with the logmon) until the executor holds it", async () => {
    const logDir = join(root, `alloc${dirCount++}`, "logs");
    const fifos = createTaskFifos(logDir, "web");
    const stage = stageFifoPath(fifos.stdout);
    const spare = openFifo(fifos.stdout, "spare");
    const writer = openFifo(fifos.stdout, "writer");
    const stream = new LogStream(logDir, "web", "stdout", { maxFiles: 10, maxFileSizeMB: 1 }, scratch);
    stream.open();
    opened.push({ stream, outputs: [] });
    let written = 0;
    const put = (count: number) => {
      writeSync(writer, lines(count, 100, written));
      written += count;
      stream.flush();
    };
    put(10);
    expect(descriptorsOn(stage)).toBe(0);

    const stageSpare = openFifo(stage, "spare");
    try {
      await waitFor("the stream to take up the stage its executor now holds", () => {
        put(10);
        return descriptorsOn(stage) === 2;
      });
      put(10);
      expect(readFileSync(join(logDir, "web.stdout.0"), "utf8")).toBe(lines(written));
    } finally {
      stream.close();
      for (const fd of [writer, spare, stageSpare]) closeSync(fd);
    }
  });
});

function safeReadlink(path: string): string | null {
  try {
    return readlinkSync(path);
  } catch {
    return null;
  }
}
