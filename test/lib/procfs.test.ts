/** Readers of /proc files. */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { mountsUnder } from "../../src/lib/procfs.ts";
import { tempDir } from "../helpers/index.ts";

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
