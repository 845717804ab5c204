/** What is left on the host after an isolated task, and the guard that removes leaks. */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupIsolation } from "../../src/nsenter/cleanup.ts";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { MNT_DETACH, mount, MS_BIND, umount2 } from "../../src/runtime/libc.ts";
import { capabilities, tempDir } from "../helpers/index.ts";
import { allocLayout } from "./fixture.ts";

describe("mountsUnder", () => {
  test("lists mount points at or under a path, deepest first, unescaping names", () => {
    const mountinfo = join(tempDir(), "mountinfo");
    const line = (id: number, point: string) => `${id} 1 0:${id} / ${point} rw,relatime - tmpfs tmpfs rw`;
    writeFileSync(
      mountinfo,
      [line(1, "/"), line(2, "/data/web"), line(3, "/data/web/secrets"), line(4, "/data/web2"), line(5, "/data/web/my\\040dir")].join("\n"),
    );
    expect(mountsUnder("/data/web", mountinfo)).toEqual(["/data/web/secrets", "/data/web/my dir", "/data/web"]);
  });
});

describe.skipIf(!capabilities.root)("cleanupIsolation", () => {
  test("detaches a mount leaked under the task dir, and leaves the alloc dir's secrets tmpfs", () => {
    const layout = allocLayout();
    const source = join(layout.root, "leak-source");
    mkdirSync(source);
    const local = join(layout.taskDir, "local");
    const secrets = join(layout.taskDir, "secrets");
    expect(mount(source, local, "", MS_BIND, "")).toBe(0);
    expect(mount("tmpfs", secrets, "tmpfs", 0, "size=1m")).toBe(0);
    try {
      expect(cleanupIsolation(layout.taskDir)).toEqual([local]);
      expect(mountsUnder(layout.taskDir)).toEqual([secrets]);
    } finally {
      umount2(secrets, MNT_DETACH);
      umount2(local, MNT_DETACH);
    }
  });
});
