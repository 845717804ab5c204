/**
 * ephemeral_disk as a hard limit, with real loop mounts: a write past the
 * size fails with ENOSPC and takes no more of the host's disk than the size;
 * a restarted agent finds the file system mounted, a rebooted host gets it
 * mounted again with its data; an alloc dir made before (files, no image) is
 * left alone; allocs of one size get images written from one template, each
 * its own clean file system; destroy leaves neither the mount, the dir nor the image; a
 * host disk too full for the image leaves nothing half-made and a warning
 * that names the image.
 */
import { describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statfsSync, statSync, writeFileSync, writeSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { AllocDir } from "../../../src/client/allocdir/alloc-dir.ts";
import { DiskImages, imageBytes, isOwnFileSystem } from "../../../src/client/allocdir/disk-image.ts";
import { mountsUnder } from "../../../src/lib/procfs.ts";
import pino from "pino";
import { MNT_DETACH, mount, umount2 } from "../../../src/runtime/libc.ts";
import { silentLogger } from "../fixtures.ts";
import { tempDir } from "../../helpers/index.ts";

const MIB = 2 ** 20;
/** What a new 20 MB image may take of the host's disk: its file system's 40 KiB of blocks, not the 140 KiB their span covers. */
const FRESH_IMAGE_HOST_MAX_KIB = 64;
const root = join(tempDir("drover-disk-images-"), "alloc");
const images = new DiskImages(root, silentLogger);
const unavailable = await images.unavailable();
if (unavailable) console.log(`skipping hard ephemeral_disk limits: ${unavailable}`);

/** The `dio` flag of the loop device backed by `image` (from sysfs); null when none is. */
function loopDirectIo(image: string): string | null {
  for (const device of readdirSync("/sys/block").filter((name) => name.startsWith("loop"))) {
    try {
      if (readFileSync(`/sys/block/${device}/loop/backing_file`, "utf8").trim() === image) return readFileSync(`/sys/block/${device}/loop/dio`, "utf8").trim();
    } catch {
      // A loop device with nothing attached has no loop/ directory.
    }
  }
  return null;
}

/** Writes 1 MiB chunks to `path` until the file system refuses one; the bytes written and the error code. */
function fill(path: string, maxMb: number): { bytes: number; code: string | undefined } {
  const fd = openSync(path, "w");
  const chunk = new Uint8Array(MIB).fill(7);
  let bytes = 0;
  try {
    for (let i = 0; i < maxMb; i++) bytes += writeSync(fd, chunk);
    return { bytes, code: undefined };
  } catch (err) {
    return { bytes, code: (err as NodeJS.ErrnoException).code };
  } finally {
    closeSync(fd);
  }
}

describe.skipIf(unavailable !== null)("an alloc dir on a file system of its ephemeral_disk size", () => {
  test("a write past the size fails with ENOSPC, and the image holds no more than the size", async () => {
    const dir = new AllocDir(root, "aaaaaaaa-0000-0000-0000-000000000001");
    expect(await images.attach(dir, 10)).toBe(true);
    dir.build();
    expect(isOwnFileSystem(dir.path)).toBe(true);
    expect(readdirSync(dir.path).sort()).toEqual(["alloc"]);
    const written = fill(join(dir.data, "blob"), 40);
    expect(written.code).toBe("ENOSPC");
    expect(written.bytes).toBeGreaterThanOrEqual(10 * MIB);
    expect(written.bytes).toBeLessThan(imageBytes(10));
    // The host's disk holds only the image's used blocks, never more than the image itself.
    const image = join(images.dir, `${dir.allocId}.img`);
    expect(statSync(image).blocks * 512).toBeLessThanOrEqual(imageBytes(10));
    // Page-sized blocks (mke2fs would pick 1 KiB ones for an image this small, four times the work per page
    // written), and a loop device that writes the image directly rather than through the host's page cache.
    expect(statfsSync(dir.path).bsize).toBe(4096);
    expect(loopDirectIo(image)).toBe("1");

    await dir.destroy();
    await images.remove(dir.allocId);
    expect(existsSync(dir.path)).toBe(false);
    expect(existsSync(image)).toBe(false);
    expect(mountsUnder(root)).toEqual([]);
  });

  test("a restarted agent finds it mounted; after a reboot it is mounted again with its data", async () => {
    const dir = new AllocDir(root, "aaaaaaaa-0000-0000-0000-000000000002");
    expect(await images.attach(dir, 10)).toBe(true);
    dir.build();
    writeFileSync(join(dir.data, "kept"), "still here");
    expect(await images.attach(dir, 10)).toBe(true);
    expect(mountsUnder(root)).toEqual([dir.path]);
    // A reboot: the mount is gone, the image stays.
    umount2(dir.path, MNT_DETACH);
    expect(existsSync(join(dir.data, "kept"))).toBe(false);
    expect(await images.attach(dir, 10)).toBe(true);
    expect(readFileSync(join(dir.data, "kept"), "utf8")).toBe("still here");
    await dir.destroy();
    await images.remove(dir.allocId);
    expect(mountsUnder(root)).toEqual([]);
  });

  test("an agent killed mid-mkfs leaves only a .part, never a broken image under the alloc's name: the next attach builds it whole", async () => {
    const dir = new AllocDir(root, "aaaaaaaa-0000-0000-0000-000000000005");
    const image = join(images.dir, `${dir.allocId}.img`);
    mkdirSync(images.dir, { recursive: true });
    // What a SIGKILL during mkfs.ext4 leaves: a sized file with no file system in it.
    writeFileSync(`${image}.part`, "half a superblock");
    expect(await images.attach(dir, 10)).toBe(true);
    expect(isOwnFileSystem(dir.path)).toBe(true);
    expect(readdirSync(images.dir).filter((name) => name.startsWith(dir.allocId))).toEqual([`${dir.allocId}.img`]);
    await dir.destroy();
    await images.remove(dir.allocId);
    expect(existsSync(image)).toBe(false);
    expect(mountsUnder(root)).toEqual([]);
  });

  test("allocs of one size, their images written from one template, each get a clean file system of their own", async () => {
    const dirs = ["aaaaaaaa-0000-0000-0000-000000000006", "aaaaaaaa-0000-0000-0000-000000000007"].map((id) => new AllocDir(root, id));
    expect(await Promise.all(dirs.map((dir) => images.attach(dir, 20)))).toEqual([true, true]);
    // Only the template's own blocks were written (the holes between them were not filled with zeros):
    // the new image takes a few dozen KiB of the host's disk, not the 140 KiB of its runs' span.
    const hostKib = (dir: AllocDir) => (statSync(join(images.dir, `${dir.allocId}.img`)).blocks * 512) / 1024;
    expect(dirs.map((dir) => hostKib(dir) <= FRESH_IMAGE_HOST_MAX_KIB)).toEqual([true, true]);
    for (const dir of dirs) {
      dir.build();
      writeFileSync(join(dir.data, "mine"), dir.allocId);
    }
    expect(dirs.map((dir) => readdirSync(dir.data))).toEqual([["mine"], ["mine"]]);
    expect(dirs.map((dir) => readFileSync(join(dir.data, "mine"), "utf8"))).toEqual(dirs.map((dir) => dir.allocId));
    for (const dir of dirs) {
      const image = join(images.dir, `${dir.allocId}.img`);
      umount2(dir.path, MNT_DETACH);
      // e2fsck -n: reads only; exit 0 is a file system with nothing to fix.
      const fsck = spawnSync("e2fsck", ["-f", "-n", image], { env: { PATH: "/usr/sbin:/sbin:/usr/bin:/bin" } });
      expect({ image, exit: fsck.status }).toEqual({ image, exit: 0 });
      await dir.destroy();
      await images.remove(dir.allocId);
    }
    expect(readdirSync(images.dir).filter((name) => name.includes("template"))).toEqual([]);
    expect(mountsUnder(root)).toEqual([]);
  });

  test("more sizes at once than templates are kept: a size whose template was dropped while being made still gets a clean file system", async () => {
    // Five sizes evict the first size's template while it is still being made; the sixth alloc asks for that size again.
    const sizes = [11, 12, 13, 14, 15, 11];
    const dirs = sizes.map((_, i) => new AllocDir(root, `aaaaaaaa-0000-0000-0001-00000000000${i}`));
    expect(await Promise.all(dirs.map((dir, i) => images.attach(dir, sizes[i]!)))).toEqual(sizes.map(() => true));
    for (const dir of dirs) {
      const image = join(images.dir, `${dir.allocId}.img`);
      umount2(dir.path, MNT_DETACH);
      const fsck = spawnSync("e2fsck", ["-f", "-n", image], { env: { PATH: "/usr/sbin:/sbin:/usr/bin:/bin" } });
      expect({ image, exit: fsck.status }).toEqual({ image, exit: 0 });
      await dir.destroy();
      await images.remove(dir.allocId);
    }
    expect(readdirSync(images.dir).filter((name) => name.includes("template"))).toEqual([]);
    expect(mountsUnder(root)).toEqual([]);
  });

  test("an alloc dir that already holds files without an image is left on the host's file system", async () => {
    const dir = new AllocDir(root, "aaaaaaaa-0000-0000-0000-000000000003");
    dir.build();
    writeFileSync(join(dir.data, "old"), "from an earlier agent");
    expect(await images.attach(dir, 10)).toBe(false);
    expect(isOwnFileSystem(dir.path)).toBe(false);
    expect(readFileSync(join(dir.data, "old"), "utf8")).toBe("from an earlier agent");
    await dir.destroy();
  });

  test("a host disk too full for mkfs.ext4 leaves no image, mount or loop device, and the warning names the image", async () => {
    // A 3 MiB tmpfs: room for the probe's image, none for the metadata of a 2 TiB one.
    const host = tempDir("drover-disk-full-");
    expect(mount("tmpfs", host, "tmpfs", 0, "size=3m")).toBe(0);
    try {
      const warnings: { err?: string }[] = [];
      const logger = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
      const full = new DiskImages(join(host, "alloc"), logger);
      mkdirSync(join(host, "alloc"));
      const dir = new AllocDir(join(host, "alloc"), "aaaaaaaa-0000-0000-0000-000000000004");
      const image = join(full.dir, `${dir.allocId}.img`);
      expect(await full.attach(dir, 1_900_000)).toBe(false);
      expect(readdirSync(full.dir)).toEqual([]);
      expect(existsSync(dir.path)).toBe(false);
      expect(loopDirectIo(image)).toBe(null);
      expect(mountsUnder(host)).toEqual([host]);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.err).toContain(image);
      expect(warnings[0]!.err).toContain("No space left on device");
    } finally {
      umount2(host, MNT_DETACH);
    }
  });

  test("a host disk that fills before an image is written from its template leaves no .part, and the alloc is polled with a warning naming the image", async () => {
    // A 3 MiB tmpfs: room for the probe, the 10 MB size's template and a first image; then filled.
    const host = tempDir("drover-disk-full-template-");
    expect(mount("tmpfs", host, "tmpfs", 0, "size=3m")).toBe(0);
    const first = new AllocDir(join(host, "alloc"), "aaaaaaaa-0000-0000-0000-000000000006");
    try {
      const warnings: { err?: string }[] = [];
      const logger = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
      const full = new DiskImages(join(host, "alloc"), logger);
      mkdirSync(join(host, "alloc"));
      expect(await full.attach(first, 10)).toBe(true);
      expect(fill(join(host, "filler"), 8).code).toBe("ENOSPC");
      const second = new AllocDir(join(host, "alloc"), "aaaaaaaa-0000-0000-0000-000000000007");
      const image = join(full.dir, `${second.allocId}.img`);
      expect(await full.attach(second, 10)).toBe(false);
      expect(readdirSync(full.dir)).toEqual([`${first.allocId}.img`]);
      expect(existsSync(second.path)).toBe(false);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.err).toContain(image);
      expect(warnings[0]!.err).toContain("no space left on device");
    } finally {
      if (isOwnFileSystem(first.path)) umount2(first.path, MNT_DETACH);
      umount2(host, MNT_DETACH);
    }
  });

  test("an image that will not mount (not ext4) is kept, and the warning gives the mount(2) errno beside mount's own message", async () => {
    const warnings: { err?: string }[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => void warnings.push(JSON.parse(line)) });
    const broken = new DiskImages(root, logger);
    const dir = new AllocDir(root, "aaaaaaaa-0000-0000-0000-000000000008");
    const image = join(broken.dir, `${dir.allocId}.img`);
    expect(await broken.unavailable()).toBe(null);
    writeFileSync(image, Buffer.alloc(imageBytes(4)));
    expect(await broken.attach(dir, 4)).toBe(false);
    expect(isOwnFileSystem(dir.path)).toBe(false);
    expect(existsSync(image)).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.err).toContain("EINVAL");
    expect(warnings[0]!.err).toContain("mount:");    await broken.remove(dir.allocId);
  });

  test("a probe a killed agent left (its image, its mount point still mounted) is cleared by the next probe", async () => {
    const leftRoot = join(tempDir("drover-disk-probe-"), "alloc");
    const next = new DiskImages(leftRoot, silentLogger);
    mkdirSync(next.dir, { recursive: true });
    writeFileSync(join(next.dir, "probe-999999.img"), "half made");
    const mountPoint = join(next.dir, "probe-999999");
    mkdirSync(mountPoint);
    expect(mount("tmpfs", mountPoint, "tmpfs", 0, "size=1m")).toBe(0);
    try {
      expect(await next.unavailable()).toBe(null);
      expect(readdirSync(next.dir)).toEqual([]);
      expect(mountsUnder(next.dir)).toEqual([]);
    } finally {
      if (isOwnFileSystem(mountPoint)) umount2(mountPoint, MNT_DETACH);
    }
  });
});
