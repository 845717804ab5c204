import { describe, expect, test } from "bun:test";
import { closeSync, lstatSync, mkdirSync, readFileSync, readSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { createTaskFifos, FifoError, openFifo } from "../../../src/log-layout/fifo.ts";
import { mkfifo } from "../../../src/runtime/libc.ts";
import { tempDir } from "../../helpers/index.ts";

const root = tempDir("drover-fifo-");
let count = 0;
const freshLogDir = () => join(root, `a${count++}`, "alloc", "logs");

describe("createTaskFifos", () => {
  test("creates .<task>.stdout.fifo and .stderr.fifo, and their .stage FIFOs, mode 0600", () => {
    const logDir = freshLogDir();
    const fifos = createTaskFifos(logDir, "web");
    expect(fifos).toEqual({ stdout: join(logDir, ".web.stdout.fifo"), stderr: join(logDir, ".web.stderr.fifo") });
    for (const path of Object.values(fifos).flatMap((fifo) => [fifo, `${fifo}.stage`])) {
      const stat = lstatSync(path);
      expect(stat.isFIFO()).toBe(true);
      expect(stat.mode & 0o777).toBe(0o600);
    }
  });

  test("reuses FIFOs that already exist", () => {
    const logDir = freshLogDir();
    const first = createTaskFifos(logDir, "web");
    const inode = statSync(first.stdout).ino;
    createTaskFifos(logDir, "web");
    expect(statSync(first.stdout).ino).toBe(inode);
  });

  test("refuses a symlink planted where a FIFO goes, and leaves its target alone", () => {
    const logDir = freshLogDir();
    mkdirSync(logDir, { recursive: true });
    const target = join(root, `target-${count}`);
    writeFileSync(target, "secret\n");
    symlinkSync(target, join(logDir, ".web.stdout.fifo"));
    expect(() => createTaskFifos(logDir, "web")).toThrow(/symbolic link/);
    expect(readFileSync(target, "utf8")).toBe("secret\n");
    expect(lstatSync(target).isFile()).toBe(true);
  });

  test("refuses a regular file where a FIFO goes", () => {
    const logDir = freshLogDir();
    mkdirSync(logDir, { recursive: true });
    writeFileSync(join(logDir, ".web.stderr.fifo"), "");
    expect(() => createTaskFifos(logDir, "web")).toThrow(FifoError);
  });

  test("rejects task names that are not a single file name", () => {
    for (const name of ["", ".", "..", "a/b", "x\0y"]) expect(() => createTaskFifos(freshLogDir(), name)).toThrow(FifoError);
  });
});

describe("openFifo", () => {
  test("refuses to follow a symlink, even to a real FIFO", () => {
    const logDir = freshLogDir();
    mkdirSync(logDir, { recursive: true });
    const realFifo = join(root, `real-${count}.fifo`);
    expect(mkfifo(realFifo, 0o600)).toBe(0);
    const planted = join(logDir, ".web.stdout.fifo");
    symlinkSync(realFifo, planted);
    expect(() => openFifo(planted, "reader")).toThrow(/symbolic link/);
  });

  test("a spare read-write end lets a writer open and write with no reader", () => {
    const { stdout } = createTaskFifos(freshLogDir(), "web");
    const spare = openFifo(stdout, "spare");
    const writer = openFifo(stdout, "writer");
    expect(writeSync(writer, "kept in the pipe\n")).toBe(17);
    const reader = openFifo(stdout, "reader");
    const buffer = Buffer.alloc(64);
    const read = readSync(reader, buffer);
    expect(buffer.subarray(0, read).toString()).toBe("kept in the pipe\n");
    for (const fd of [reader, writer, spare]) closeSync(fd);
  });
});
