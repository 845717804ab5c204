import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  O_NOFOLLOW,
  O_WRONLY,
  readTextFile,
  SysError,
  sysMkdirNew,
  sysOpen,
  sysReaddir,
  sysRename,
  sysStat,
  sysUnlink,
  writeTextFile,
} from "../../src/runtime/libc.ts";
import { spawnProcess } from "../../src/runtime/spawn.ts";
import { tempDir } from "../helpers/index.ts";

describe("libc file calls", () => {
  const dir = tempDir();

  test("read and write text, including /proc files whose size reads as 0", () => {
    const path = join(dir, "a.txt");
    writeTextFile(path, "héllo\n".repeat(5000));
    expect(readTextFile(path)).toBe("héllo\n".repeat(5000));
    expect(readTextFile("/proc/self/status")).toContain(`Pid:\t${process.pid}`);
  });

  test("stat tells files, directories, FIFOs and symlinks apart; lstat does not follow", async () => {
    const file = join(dir, "f");
    writeFileSync(file, "x");
    const link = join(dir, "l");
    symlinkSync(file, link);
    const fifo = join(dir, "p");
    await spawnProcess({ argv: ["mkfifo", fifo], env: { PATH: "/usr/bin:/bin" } }).exited;
    expect(sysStat(file).kind).toBe("file");
    expect(sysStat(dir).kind).toBe("directory");
    expect(sysStat(fifo).kind).toBe("fifo");
    expect(sysStat(link).kind).toBe("file");
    expect(sysStat(link, false).kind).toBe("symlink");
    expect(sysStat(link).ino).toBe(sysStat(file).ino);
  });

  test("failures carry Node's errno names and the path", () => {
    const missing = join(dir, "missing");
    let caught: unknown;
    try {
      readTextFile(missing);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SysError);
    expect((caught as SysError).code).toBe("ENOENT");
    expect((caught as Error).message).toBe(`ENOENT: No such file or directory, open '${missing}'`);
    const link = join(dir, "l2");
    symlinkSync(join(dir, "f"), link);
    expect(() => sysOpen(link, O_WRONLY | O_NOFOLLOW)).toThrow("ELOOP");
  });

  test("mkdir (an existing directory is fine, and said to be there), readdir, rename, unlink", () => {
    const sub = join(dir, "sub");
    expect(sysMkdirNew(sub)).toBe(true);
    expect(sysMkdirNew(sub)).toBe(false);
    mkdirSync(join(sub, "inner"));
    writeTextFile(join(sub, "x"), "1");
    sysRename(join(sub, "x"), join(sub, "y"));
    expect(sysReaddir(sub).sort()).toEqual(["inner", "y"]);
    sysUnlink(join(sub, "y"));
    expect(sysReaddir(sub)).toEqual(["inner"]);
    expect(readFileSync(join(dir, "a.txt"), "utf8").length).toBeGreaterThan(0);
  });
});
