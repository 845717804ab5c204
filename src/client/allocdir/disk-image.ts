/**
 * ephemeral_disk { size } as a hard limit: each alloc dir is a file system of
 * its own, an ext4 image loop-mounted on it, so a write past the size fails
 * with ENOSPC in the task, at once, whatever the driver, and the host's disk
 * never fills from a task (a poll every few seconds lets a fast writer
 * overshoot, and never sees one that writes and deletes in between).
 *
 *   attach(alloc dir, size) ──> already its own mount (a restarted agent): nothing to do
 *     │ its image exists (the host rebooted): mount it again
 *     │ the dir exists with files but no image (made before this): left as it is, polled
 *     └─> sparse file <alloc_dir>.disks/<id>.img.part of size + overhead ──> mkfs.ext4 (no
 *         journal) ──> renamed <id>.img ──> a loop device, mounted nosuid,nodev on the alloc dir ──> lost+found removed
 *   remove(id) ──> the image file (the alloc dir's destroy has detached the mount; the
 *                  loop device frees itself once the file system is gone)
 *
 * The image is sparse: it takes host disk only for what the alloc writes, up
 * to its size. Hosts without the means (not root, no loop devices, no
 * mkfs.ext4, no ext4) fall back to the poll (allocrunner/hooks/disk-limit.ts),
 * which the agent says once. The probe first clears what a killed agent's probe left.
 */
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Logger } from "../../lib/logger.ts";
import { BYTES_PER_MIB } from "../../lib/units.ts";
import { spawnProcess } from "../../runtime/spawn.ts";
import { MNT_DETACH, MS_NODEV, MS_NOSUID, umount2 } from "../../runtime/libc.ts";
import { mountLoopImage, MS_NOATIME } from "../../runtime/mounts.ts";
import type { AllocDir } from "./alloc-dir.ts";

/** Where the tools are looked for: the agent's own PATH may lack the sbin directories. */
const TOOL_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/**
 * ext4's own use of an image (inode tables, bitmaps, group descriptors):
 * measured at 5 to 8 % of small images and 2 % of large ones. The image is
 * this much larger than the size, so the alloc gets at least its size, and
 * a write fails within a few percent above it.
 */
const EXT4_OVERHEAD_FRACTION = 1 / 10;
const EXT4_OVERHEAD_MIN_MB = 2;
/** ext4 block size of an image: the page size of the hosts drover runs on (x86-64, arm64 with 4 KiB pages). */
const IMAGE_BLOCK_BYTES = 4096;
/** The probe's image: the smallest ext4 that mounts. */
const PROBE_SIZE_MB = 4;

export function imageBytes(sizeMb: number): number {
  return Math.ceil(sizeMb + sizeMb * EXT4_OVERHEAD_FRACTION + EXT4_OVERHEAD_MIN_MB) * BYTES_PER_MIB;
}

/** Whether `path` is a mount point: its device differs from its parent's. */
export function isOwnFileSystem(path: string): boolean {
  try {
    return statSync(path).dev !== statSync(dirname(path)).dev;
  } catch {
    return false;
  }
}

async function run(argv: readonly string[]): Promise<void> {
  const child = spawnProcess({ argv, env: { PATH: TOOL_PATH }, stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [status, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  if (status.exitCode !== 0 || status.signal !== 0) throw new Error(`${argv[0]}: ${stderr.trim() || `exit ${status.exitCode}`}`);
}

/** Makes the image; a failure names it (mkfs.ext4's own messages, "No space left on device while ...", do not). */
async function makeImage(image: string, sizeMb: number): Promise<void> {
  try {
    await makeImageAt(image, sizeMb);
  } catch (err) {
    throw new Error(`cannot make ${image}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Built under `<image>.part` and renamed when mkfs is done, so an image under its own name is
 * always whole: an agent killed mid-mkfs leaves only a .part, which the next try replaces, instead
 * of a broken image a restarted agent would take for the alloc's data and never mount.
 */
async function makeImageAt(image: string, sizeMb: number): Promise<void> {
  const part = partOf(image);
  rmSync(part, { force: true });
  try {
    await buildImage(part, sizeMb);
    renameSync(part, image);
  } finally {
    rmSync(part, { force: true });
  }
}

const partOf = (image: string) => `${image}.part`;

async function buildImage(image: string, sizeMb: number): Promise<void> {
  const fd = openSync(image, "wx", 0o600);
  try {
    ftruncateSync(fd, imageBytes(sizeMb));
  } finally {
    closeSync(fd);
  }
  // No journal: an alloc's scratch space needs no crash recovery, and it is one kernel thread less per alloc.
  // Page-sized blocks: for images under 512 MB mke2fs picks 1 KiB blocks, and every page a task or its log
  // pump writes then costs four blocks' delayed allocation and buffer heads (ext4_da_get_block_prep
  // led the pump's profile): 1 GiB of logs took twice the time of the host's own disk.
  await run(["mkfs.ext4", "-q", "-F", "-m", "0", "-b", String(IMAGE_BLOCK_BYTES), "-O", "^has_journal,^resize_inode", "-E", "lazy_itable_init=1,nodiscard", image]);
}

/**
 * In-process first (a loop device and mount(2), no process to start); where
 * that is refused (a kernel before LOOP_CONFIGURE, a /dev without the loop
 * device's node), util-linux's mount, which knows more ways.
 */
async function mountImage(image: string, dir: string): Promise<void> {
  try {
    mountLoopImage(image, dir, "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME);
  } catch {
    await run(["mount", "-t", "ext4", "-o", "loop,nosuid,nodev,noatime", image, dir]);
  }
}

export class DiskImages {
  readonly dir: string;
  private probed: Promise<string | null> | undefined;

  constructor(
    allocRoot: string,
    private readonly logger: Logger,
  ) {
    this.dir = `${resolve(allocRoot)}.disks`;
  }

  /** Why this host cannot give alloc dirs file systems of their own, or null when it can; tried once. */
  unavailable(): Promise<string | null> {
    this.probed ??= this.probe().then((reason) => {
      if (reason) this.logger.warn({ reason }, "ephemeral_disk is not a hard limit on this host: alloc dirs are measured every few seconds instead");
      return reason;
    });
    return this.probed;
  }

  /** Puts `allocDir` on a file system of `sizeMb`; false where it stays on the host's (see above). */
  async attach(allocDir: AllocDir, sizeMb: number): Promise<boolean> {
    if (isOwnFileSystem(allocDir.path)) return true;
    if ((await this.unavailable()) !== null) return false;
    const image = this.image(allocDir.allocId);
    const made = !existsSync(image);
    try {
      if (made) {
        if (existsSync(allocDir.path) && readdirSync(allocDir.path).length > 0) return false;
        await makeImage(image, sizeMb);
      }
      mkdirSync(allocDir.path, { recursive: true, mode: 0o755 });
      await mountImage(image, allocDir.path);
      if (made) rmdirSync(join(allocDir.path, "lost+found"));
      return true;
    } catch (err) {
      if (isOwnFileSystem(allocDir.path)) umount2(allocDir.path, MNT_DETACH);
      // An image that holds an alloc's data (mounted again after a reboot) is kept for the next try.
      if (made) rmSync(image, { force: true });
      this.logger.warn({ alloc_id: allocDir.allocId, err: (err as Error).message }, "cannot give the alloc dir a file system of its own; its ephemeral_disk is polled");
      return false;
    }
  }

  /** Deletes the alloc's image, once its alloc dir is gone. */
  remove(allocId: string): void {
    rmSync(this.image(allocId), { force: true });
    rmSync(partOf(this.image(allocId)), { force: true });
  }

  private image(allocId: string): string {
    return join(this.dir, `${allocId}.img`);
  }

  /**
   * What an earlier agent's probe left when it was killed mid-way (the image, the mount point, perhaps
   * still mounted and holding a loop device): detached and deleted, as the probe itself would have.
   */
  private clearProbes(): void {
    for (const name of readdirSync(this.dir).filter((entry) => entry.startsWith("probe-"))) {
      const path = join(this.dir, name);
      if (isOwnFileSystem(path)) umount2(path, MNT_DETACH);
      // Only an unmounted directory is deleted: a mount that would not go never leads the deletion below it.
      if (!isOwnFileSystem(path)) rmSync(path, { recursive: true, force: true });
    }
  }

  private async probe(): Promise<string | null> {
    if (process.getuid?.() !== 0) return "mounting an image needs root";
    if (!existsSync("/dev/loop-control")) return "no loop devices (/dev/loop-control)";
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const image = join(this.dir, `probe-${process.pid}.img`);
    const mountPoint = join(this.dir, `probe-${process.pid}`);
    try {
      this.clearProbes();
      await makeImage(image, PROBE_SIZE_MB);
      mkdirSync(mountPoint, { recursive: true });
      await mountImage(image, mountPoint);
      umount2(mountPoint, MNT_DETACH);
      return null;
    } catch (err) {
      return (err as Error).message;
    } finally {
      rmSync(image, { force: true });
      if (existsSync(mountPoint) && !isOwnFileSystem(mountPoint)) rmSync(mountPoint, { recursive: true, force: true });
    }
  }
}
