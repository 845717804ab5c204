/**
 * One layer blob (a tar, plain, gzip or zstd: told by its first bytes, not
 * by a media type a registry may get wrong) unpacked into a directory in
 * overlayfs' own format, so that the layers of an image stack as lower dirs:
 *
 *   .wh.<name>     in the tar -> <name> as a 0/0 character device (deleted below)
 *   .wh..wh..opq   in the tar -> the directory gets trusted.overlay.opaque=y (replaced)
 *
 * Ownership and modes are kept as the tar has them (the agent runs as root);
 * node-tar refuses "..", absolute paths and writes through symlinks. Device
 * nodes in a layer are skipped (a task's /dev is its own).
 */
import { closeSync, createReadStream, lstatSync, mkdirSync, openSync, readSync } from "node:fs";
import { basename, dirname, join, posix } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip, createZstdDecompress } from "node:zlib";
import type { Transform } from "node:stream";
import * as tar from "tar";
import { makeWhiteout, setXattr } from "../../runtime/libc.ts";

const WHITEOUT_PREFIX = ".wh.";
const OPAQUE_MARKER = ".wh..wh..opq";
const OPAQUE_XATTR = "trusted.overlay.opaque";
const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

function decompressorFor(file: string): Transform | null {
  const head = Buffer.alloc(4);
  const fd = openSync(file, "r");
  try {
    readSync(fd, head, 0, head.length, 0);
  } finally {
    closeSync(fd);
  }
  const starts = (magic: number[]) => magic.every((byte, i) => head[i] === byte);
  if (starts(GZIP_MAGIC)) return createGunzip();
  if (starts(ZSTD_MAGIC)) return createZstdDecompress();
  return null;
}

/** Unpacks `blob` into the empty directory `into`. */
export async function unpackLayer(blob: string, into: string): Promise<void> {
  const whiteouts: string[] = [];
  const opaque: string[] = [];
  const extract = tar.x({
    cwd: into,
    preserveOwner: true,
    // Modes exactly as the layer has them.
    umask: 0,
    strict: true,
    filter: (path, entry) => {
      const name = basename(path);
      if (name === OPAQUE_MARKER) opaque.push(insideLayer(dirname(path)));
      else if (name.startsWith(WHITEOUT_PREFIX)) whiteouts.push(join(insideLayer(dirname(path)), name.slice(WHITEOUT_PREFIX.length)));
      else return !("type" in entry && (entry.type === "CharacterDevice" || entry.type === "BlockDevice" || entry.type === "FIFO"));
      return false;
    },
  });
  const decompress = decompressorFor(blob);
  if (decompress) await pipeline(createReadStream(blob), decompress, extract);
  else await pipeline(createReadStream(blob), extract);
  for (const dir of opaque) setXattr(directoryIn(into, dir), OPAQUE_XATTR, "y");
  for (const deleted of whiteouts) makeWhiteout(join(directoryIn(into, dirname(deleted)), basename(deleted)));
}

/** A tar path as a path inside the layer; ".." out of it is refused. */
function insideLayer(path: string): string {
  const relative = posix.normalize(`/${path}`).slice(1);
  if (relative.startsWith("..")) throw new Error(`layer entry ${path} points outside the layer`);
  return relative;
}

/**
 * `relative` under `root` as a directory, made where missing, never through a
 * symlink: a layer's own symlink (etc -> /) must not carry a whiteout onto the host.
 */
function directoryIn(root: string, relative: string): string {
  let current = root;
  for (const part of relative.split("/").filter((each) => each !== "" && each !== ".")) {
    current = join(current, part);
    let stat;
    try {
      stat = lstatSync(current);
    } catch {
      mkdirSync(current, { mode: 0o755 });
      continue;
    }
    if (!stat.isDirectory()) throw new Error(`layer whiteout under ${relative}: ${part} is not a directory`);
  }
  return current;
}
