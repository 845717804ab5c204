import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readExitResult, writeExitResult } from "../../src/executor/files.ts";
import { executorPrefix, newExecutorFiles } from "../../src/executor/naming.ts";
import { lookupUser } from "../../src/executor/user.ts";
import { tempDir } from "../helpers/index.ts";

describe("executor files", () => {
  test("every executor of a task shares a prefix; each gets its own socket, exit file, log and spec", () => {
    const files = newExecutorFiles("/run/drover", "0123456789abcdef", "web");
    expect(files.socket).toStartWith(`/run/drover/${executorPrefix("0123456789abcdef", "web")}`);
    expect(files.socket).toMatch(/^\/run\/drover\/01234567\.[0-9a-f]{12}\.[0-9a-f]{8}\.sock$/);
    expect(files.exitFile).toBe(files.socket.replace(/\.sock$/, ".exit.json"));
    expect(newExecutorFiles("/run/drover", "0123456789abcdef", "web").socket).not.toBe(files.socket);
    expect(executorPrefix("0123456789abcdef", "api")).not.toBe(executorPrefix("0123456789abcdef", "web"));
  });

  test("a run directory too long for a unix socket path is refused, naming it", () => {
    const longDir = `/${"d".repeat(90)}`;
    expect(() => newExecutorFiles(longDir, "alloc", "web")).toThrow(`over the 107-byte limit of unix socket paths: use a shorter run directory than ${longDir}`);
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
