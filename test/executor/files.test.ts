import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ExitResultWriter, readExitResult, writeExitResult } from "../../src/executor/files.ts";
import { executorPrefix, newExecutorFiles, taskKey } from "../../src/executor/naming.ts";
import { lookupUser } from "../../src/executor/user.ts";
import { tempDir } from "../helpers/index.ts";

describe("executor files", () => {
  test("every run of a task gets a key with the task's prefix; executors get names of their own", () => {
    const key = taskKey("0123456789abcdef", "web");
    expect(key).toStartWith(executorPrefix("0123456789abcdef", "web"));
    expect(key).toMatch(/^01234567\.[0-9a-f]{12}\.[0-9a-f]{8}$/);
    expect(taskKey("0123456789abcdef", "web")).not.toBe(key);
    expect(executorPrefix("0123456789abcdef", "api")).not.toBe(executorPrefix("0123456789abcdef", "web"));
    const files = newExecutorFiles("/run/drover");
    expect(files.socket).toMatch(/^\/run\/drover\/ex-[0-9a-f]{8}\.sock$/);
    expect(files.log).toBe(files.socket.replace(/\.sock$/, ".log"));
    expect(newExecutorFiles("/run/drover").socket).not.toBe(files.socket);
  });

  test("a run directory too long for a unix socket path is refused, naming it", () => {
    const longDir = `/${"d".repeat(100)}`;
    expect(() => newExecutorFiles(longDir)).toThrow(`over the 107-byte limit of unix socket paths: use a shorter run directory than ${longDir}`);
  });

  test("the exit result round-trips; a missing file is null and a malformed one an error naming it", () => {
    const dir = tempDir();
    const path = join(dir, "x.exit.json");
    expect(readExitResult(path)).toBeNull();
    const result = { exitCode: 137, signal: 9, oomKilled: true, finishedAt: 123 };
    writeExitResult(path, result);
    expect(readExitResult(path)).toEqual(result);
    writeFileSync(path, '{"exitCode": "x"}');
    expect(() => readExitResult(path)).toThrow(`exit result ${path} is malformed`);
  });

  test("results written together are each on disk when their write settles; one that cannot be written fails alone", async () => {
    const dir = tempDir();
    const writer = new ExitResultWriter();
    const results = [1, 2, 3].map((exitCode) => ({ exitCode, signal: 0, oomKilled: false, finishedAt: exitCode }));
    const missing = join(dir, "gone", "x.exit.json");
    const writes = results.map((result) => writer.write(join(dir, `${result.exitCode}.exit.json`), result));
    const failed = writer.write(missing, results[0]!);
    await Promise.all(writes);
    await expect(failed).rejects.toThrow("ENOENT");
    for (const result of results) expect(readExitResult(join(dir, `${result.exitCode}.exit.json`))).toEqual(result);
  });
});

describe("task user lookup", () => {
  test("by name or uid from passwd; an unknown user is named in the error", () => {
    const dir = tempDir();
    const passwd = join(dir, "passwd");
    writeFileSync(passwd, "root:x:0:0:root:/root:/bin/sh\nweb:x:1001:1002::/home/web:/bin/sh\n");
    expect(lookupUser("web", passwd)).toEqual({ uid: 1001, gid: 1002 });
    expect(lookupUser("1001", passwd)).toEqual({ uid: 1001, gid: 1002 });
    expect(() => lookupUser("ghost", passwd)).toThrow(`user "ghost": no such user in ${passwd}`);
  });
});
