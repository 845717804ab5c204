/**
 * A hostile layer cannot write outside its own directory: not through a
 * symlink it made, not by "..", not with a whiteout or opaque marker placed
 * under its own symlink. Layers are written with Python's tarfile, which
 * writes any entry it is told to.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { unpackLayer } from "../../../src/drivers/docker/unpack.ts";
import { capabilities, tempDir } from "../../helpers/index.ts";

const hasPython = existsSync("/usr/bin/python3");
if (!hasPython) console.log("skipping hostile layer tests: no /usr/bin/python3");
const dir = tempDir("drover-unpack-");

/** A tar at `path` of entries: [name, "dir" | "file" | "symlink:<target>" | "hardlink:<target>"]. */
function hostileTar(path: string, entries: [string, string][]): void {
  const script = `
import io, sys, tarfile, json
entries = json.loads(sys.argv[2])
with tarfile.open(sys.argv[1], "w") as tar:
    for name, kind in entries:
        info = tarfile.TarInfo(name)
        data = b""
        if kind == "dir": info.type = tarfile.DIRTYPE
        elif kind.startswith("symlink:"): info.type, info.linkname = tarfile.SYMTYPE, kind[8:]
        elif kind.startswith("hardlink:"): info.type, info.linkname = tarfile.LNKTYPE, kind[9:]
        else: data = b"owned\\n"
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
`;
  const result = spawnSync("python3", ["-c", script, path, JSON.stringify(entries)], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(result.stderr);
}

describe.skipIf(!hasPython || !capabilities.root)("a hostile layer", () => {
  const outside = join(dir, "outside");
  mkdirSync(outside);

  for (const [name, entries] of [
    ["a file through its own symlink", [["escape", `symlink:${outside}`], ["escape/planted", "file"]]],
    ["a whiteout under its own symlink", [["escape", `symlink:${outside}`], ["escape/.wh.planted", "file"]]],
    ["an opaque marker under its own symlink", [["escape", `symlink:${outside}`], ["escape/.wh..wh..opq", "file"]]],
    ["a whiteout by ..", [["../.wh.planted", "file"]]],
  ] as [string, [string, string][]][]) {
    test(`${name} is refused and nothing lands outside`, async () => {
      const tarball = join(dir, `${name.replaceAll(" ", "-")}.tar`);
      hostileTar(tarball, entries);
      const into = join(dir, `into-${name.replaceAll(" ", "-")}`);
      mkdirSync(into);
      await unpackLayer(tarball, into).catch(() => undefined);
      expect(readdirSync(outside)).toEqual([]);
      expect(existsSync(join(dir, "planted"))).toBe(false);
    });
  }

  test("a hard link to an absolute host path links inside the layer, or not at all", async () => {
    const tarball = join(dir, "hardlink.tar");
    hostileTar(tarball, [["etc", "dir"], ["etc/passwd", "file"], ["stolen", "hardlink:/etc/passwd"]]);
    const into = join(dir, "into-hardlink");
    mkdirSync(into);
    await unpackLayer(tarball, into).catch(() => undefined);
    const stolen = spawnSync("stat", ["-c", "%i", join(into, "stolen")], { encoding: "utf8" }).stdout.trim();
    const hostPasswd = spawnSync("stat", ["-c", "%i", "/etc/passwd"], { encoding: "utf8" }).stdout.trim();
    expect(stolen).not.toBe(hostPasswd);
  });
});
