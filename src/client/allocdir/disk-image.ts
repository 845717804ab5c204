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
 *     └─> sparse file <alloc_dir>.disks/<id>.img.part of size + overhead ──> the size's template
 *         written in ──> renamed <id>.img ──> a loop device, mounted nosuid,nodev on the alloc dir
 *   the template of a size: mkfs.ext4 (no journal) run once on a scratch image, its lost+found
 *     removed by debugfs (else from each alloc dir once mounted), whose
 *     few non-zero blocks (~50 KiB of a 300 MB image) are kept in memory and the image
 *     deleted; an alloc's image is those blocks written into a sparse file, no process
 *     started (mkfs per alloc cost 20 to 50 ms of a start). Images above
 *     TEMPLATE_MAX_BYTES are made by mkfs each. Every image of a size is then the same
 *     file system, its UUID included: ext4 mounts any number of them.
 *   remove(id) ──> the image file (the alloc dir's destroy has detached the mount; the
 *                  loop device frees itself once the file system is gone)
 *
 * The image is sparse: it takes host disk only for what the alloc writes, up
 * to its size. Hosts without the means (not root, no loop devices, no
 * mkfs.ext4, no ext4) fall back to the poll (allocrunner/hooks/disk-limit.ts),
 * which the agent says once. The probe first clears what a killed agent's probe left.
 */
import { closeSync, existsSync, ftruncateSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from "node:fs";
import { mkdir, open, rm, rmdir } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Logger } from "../../lib/logger.ts";
import { BYTES_PER_MIB } from "../../lib/units.ts";
import { runCollected, runTool, TOOL_PATH } from "../../runtime/spawn.ts";
import { MNT_DETACH, MS_NODEV, MS_NOSUID, umount2 } from "../../runtime/libc.ts";
import { MS_NOATIME } from "../../runtime/mounts.ts";
import { mountLoopImageOffThread } from "../../runtime/mount-thread.ts";
import type { AllocDir } from "./alloc-dir.ts";

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
/**
 * Images up to this size are written from their size's template; larger ones
 * are made by mkfs each, as reading a template reads its whole image once.
 */
const TEMPLATE_MAX_BYTES = 8 * 1024 * BYTES_PER_MIB;
/** Templates kept, the sizes used last: a host sees few distinct ephemeral_disk sizes. */
const TEMPLATES_KEPT = 4;
/** How much of a template's scratch image is read at a time; a chunk of zeros is passed over whole. */
const SCAN_CHUNK_BYTES = BYTES_PER_MIB;
/**
 * Non-zero runs of a template closer than this are joined, the zeros between
 * written too. Only a hole of one block is: each zero written is a block the
 * image file takes on the host and that reaches the disk, and the loop
 * device's direct reads wait for it there while the alloc mounts. A 10 MB
 * image's three runs (40 KiB) were joined into one write of 140 KiB before:
 * 1000 allocs starting wrote 100 MB of zeros to the host's disk.
 */
const RUN_JOIN_GAP_BYTES = 2 * IMAGE_BLOCK_BYTES;

/** Bytes of an image, with where they start. */
type ImageRun = { offset: number; bytes: Buffer };

/** A freshly made image: its non-zero runs (the rest is a hole), and whether mkfs's lost+found is still in it. */
interface ImageTemplate {
  runs: readonly ImageRun[];
  lostFound: boolean;
}

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

/** Makes the image (with `build`); a failure names it (mkfs.ext4's own messages, "No space left on device while ...", do not). */
async function makeImage(image: string, build: (part: string) => Promise<void>): Promise<void> {
  try {
    await makeImageAt(image, build);
  } catch (err) {
    throw new Error(`cannot make ${image}: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * Built under `<image>.part` and renamed when whole, so an image under its own name is
 * always whole: an agent killed mid-way leaves only a .part, which the next try replaces, instead
 * of a broken image a restarted agent would take for the alloc's data and never mount.
 */
async function makeImageAt(image: string, build: (part: string) => Promise<void>): Promise<void> {
  const part = partOf(image);
  rmSync(part, { force: true });
  try {
    await build(part);
    renameSync(part, image);
  } finally {
    rmSync(part, { force: true });
  }
}

const partOf = (image: string) => `${image}.part`;

/** A sparse file of the image's size, made here (it must not exist). */
function sparseFile(image: string, sizeMb: number): number {
  const fd = openSync(image, "wx", 0o600);
  try {
    ftruncateSync(fd, imageBytes(sizeMb));
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

async function mkfsImage(image: string, sizeMb: number): Promise<void> {
  closeSync(sparseFile(image, sizeMb));
  // No journal: an alloc's scratch space needs no crash recovery, and it is one kernel thread less per alloc.
  // Page-sized blocks: for images under 512 MB mke2fs picks 1 KiB blocks, and every page a task or its log
  // pump writes then costs four blocks' delayed allocation and buffer heads (ext4_da_get_block_prep
  // led the pump's profile): 1 GiB of logs took twice the time of the host's own disk.
  await runTool(["mkfs.ext4", "-q", "-F", "-m", "0", "-b", String(IMAGE_BLOCK_BYTES), "-O", "^has_journal,^resize_inode", "-E", "lazy_itable_init=1,nodiscard", image]);
}

/** mkfs for an alloc's image; whether its lost+found is still there (see removeLostFound). */
async function mkfsAllocImage(image: string, sizeMb: number): Promise<boolean> {
  await mkfsImage(image, sizeMb);
  return !(await removeLostFound(image));
}

/**
 * mkfs's lost+found taken out of the unmounted image by debugfs (e2fsprogs), once per
 * template, so no alloc pays an rmdir on its new mount: a synchronous read and write of
 * the fresh file system through the loop device on the agent's one JS thread, measured
 * as a fifth of the agent's busy time while 300 allocs start (issue 35). False where
 * debugfs is missing or refused (Alpine ships it apart, in e2fsprogs-extra): the alloc
 * dir then removes it once mounted, as before.
 */
async function removeLostFound(image: string): Promise<boolean> {
  try {
    const { status, stderr } = await runCollected({ argv: ["debugfs", "-w", "-R", "rmdir lost+found", image], env: { PATH: TOOL_PATH }, stdin: "ignore" });
    // debugfs exits 0 whatever its command did: it prints its version on stderr, and a failure after it.
    return status.exitCode === 0 && stderr.split("\n").every((line) => line === "" || DEBUGFS_BANNER.test(line));
  } catch {
    return false;
  }
}

const DEBUGFS_BANNER = /^debugfs \d/;

/** The template of `sizeMb`: mkfs on the scratch image at `scratch`, its non-zero blocks read back, the image deleted. */
async function makeTemplate(scratch: string, sizeMb: number): Promise<ImageTemplate> {
  rmSync(scratch, { force: true });
  try {
    const lostFound = await mkfsAllocImage(scratch, sizeMb);
    return { runs: await nonZeroRuns(scratch), lostFound };
  } finally {
    rmSync(scratch, { force: true });
  }
}

/**
 * Read through node:fs's promises, on the thread pool: the scan reads the whole image (a
 * 1 GiB image took seconds, an 8 GiB one over 20 s on a loaded host), which read
 * synchronously held the agent's one JS thread, its API and heartbeats, that long.
 */
async function nonZeroRuns(image: string): Promise<readonly ImageRun[]> {
  const runs: ImageRun[] = [];
  const chunk = Buffer.alloc(SCAN_CHUNK_BYTES);
  const zeros = Buffer.alloc(SCAN_CHUNK_BYTES);
  let current: { offset: number; blocks: Buffer[] } | undefined;
  const closeRun = () => {
    if (current) runs.push({ offset: current.offset, bytes: Buffer.concat(current.blocks) });
    current = undefined;
  };
  const file = await open(image, "r");
  try {
    for (let offset = 0, read = 0; (read = (await file.read(chunk, 0, SCAN_CHUNK_BYTES, offset)).bytesRead) > 0; offset += read) {
      if (read === SCAN_CHUNK_BYTES && chunk.equals(zeros)) {
        closeRun();
        continue;
      }
      for (let at = 0; at < read; at += IMAGE_BLOCK_BYTES) {
        const block = chunk.subarray(at, Math.min(at + IMAGE_BLOCK_BYTES, read));
        if (block.equals(zeros.subarray(0, block.length))) {
          closeRun();
          continue;
        }
        current ??= { offset: offset + at, blocks: [] };
        current.blocks.push(Buffer.from(block));
      }
    }
    closeRun();
  } finally {
    await file.close();
  }
  return joinRuns(runs);
}

/** Runs closer than RUN_JOIN_GAP_BYTES made one, the hole between them filled with zeros. */
function joinRuns(runs: readonly ImageRun[]): readonly ImageRun[] {
  const joined: { offset: number; parts: Buffer[]; end: number }[] = [];
  for (const run of runs) {
    const last = joined.at(-1);
    if (last && run.offset - last.end < RUN_JOIN_GAP_BYTES) {
      last.parts.push(Buffer.alloc(run.offset - last.end), run.bytes);
    } else {
      joined.push({ offset: run.offset, parts: [run.bytes], end: 0 });
    }
    joined.at(-1)!.end = run.offset + run.bytes.length;
  }
  return joined.map((run) => ({ offset: run.offset, bytes: Buffer.concat(run.parts) }));
}

/**
 * Through node:fs's promises, which run on the thread pool: the agent's one JS thread
 * also serves the API, schedules and runs allocs, and an alloc start at a high rate
 * must not hold it in file writes.
 */
async function writeTemplate(image: string, sizeMb: number, template: ImageTemplate): Promise<boolean> {
  const file = await open(image, "wx", 0o600);
  try {
    await file.truncate(imageBytes(sizeMb));
    for (const run of template.runs) await file.write(run.bytes, 0, run.bytes.length, run.offset);
  } finally {
    await file.close();
  }
  return template.lostFound;
}

/**
 * In-process first (a loop device and mount(2) on the mount thread, no process to start); where
 * that is refused (a kernel before LOOP_CONFIGURE, a /dev without the loop
 * device's node), util-linux's mount, which knows more ways.
 */
async function mountImage(image: string, dir: string): Promise<void> {
  try {
    await mountLoopImageOffThread(image, dir, "ext4", MS_NOSUID | MS_NODEV | MS_NOATIME);
  } catch (inProcess) {
    try {
      await runTool(["mount", "-t", "ext4", "-o", "loop,nosuid,nodev,noatime", image, dir]);
    } catch (err) {
      // Both answers: the in-process one has the errno (EBUSY, EINVAL), mount's own message rarely does.
      throw new Error(`${(inProcess as Error).message}; ${(err as Error).message}`, { cause: err });
    }
  }
}

/**
 * The first writes to a new file system read its bitmaps and inode table through the loop
 * device (direct I/O, a kernel thread's turn each): made by the alloc dir's mkdirs on the
 * agent's one JS thread, that wait was a quarter of its busy time while 300 allocs start
 * (issue 35). A directory made and removed here, on the thread pool, reads them first.
 */
async function warmUp(root: string): Promise<void> {
  const probe = join(root, WARM_UP_DIR);
  await mkdir(probe);
  await rmdir(probe);
}

const WARM_UP_DIR = ".drover-warm-up";

export class DiskImages {
  readonly dir: string;
  private probed: Promise<string | null> | undefined;
  /** By size in MB, in the order they were last used (see TEMPLATES_KEPT). */
  private readonly templates = new Map<number, Promise<ImageTemplate>>();
  /** Names each template's scratch image: a size's template dropped while still being made may be made again beside it. */
  private templatesStarted = 0;

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
    let lostFound = false;
    try {
      if (made) {
        if (existsSync(allocDir.path) && readdirSync(allocDir.path).length > 0) return false;
        await makeImage(image, async (part) => void (lostFound = await this.build(part, sizeMb)));
      }
      // On the thread pool: beside the mounts of hundreds of allocs starting, this mkdir in the
      // alloc root waited on the JS thread for 8% of its busy time (issue 35).
      await mkdir(allocDir.path, { recursive: true, mode: 0o755 });
      await mountImage(image, allocDir.path);
      if (lostFound) rmdirSync(join(allocDir.path, "lost+found"));
      if (made) await warmUp(allocDir.path);
      return true;
    } catch (err) {
      if (isOwnFileSystem(allocDir.path)) umount2(allocDir.path, MNT_DETACH);
      // An image that holds an alloc's data (mounted again after a reboot) is kept for the next try.
      if (made) rmSync(image, { force: true });
      this.logger.warn({ alloc_id: allocDir.allocId, err: (err as Error).message }, "cannot give the alloc dir a file system of its own; its ephemeral_disk is polled");
      return false;
    }
  }

  /** Deletes the alloc's image, once its alloc dir is gone (on the thread pool: an unlink of an image frees its blocks). */
  async remove(allocId: string): Promise<void> {
    await Promise.all([rm(this.image(allocId), { force: true }), rm(partOf(this.image(allocId)), { force: true })]);
  }

  /** Makes the image; whether its lost+found is still there. */
  private async build(image: string, sizeMb: number): Promise<boolean> {
    if (imageBytes(sizeMb) > TEMPLATE_MAX_BYTES) return mkfsAllocImage(image, sizeMb);
    return writeTemplate(image, sizeMb, await this.template(sizeMb));
  }

  /** The template of `sizeMb`, made once however many allocs of that size start together. */
  private template(sizeMb: number): Promise<ImageTemplate> {
    const kept = this.templates.get(sizeMb);
    this.templates.delete(sizeMb);
    // Named as a probe's leftovers are, so what a killed agent left is cleared the same way.
    const template = kept ?? makeTemplate(join(this.dir, `probe-template-${sizeMb}-${process.pid}-${this.templatesStarted++}.img`), sizeMb);
    this.templates.set(sizeMb, template);
    // A template that could not be made is tried again by the next alloc.
    template.catch(() => this.templates.get(sizeMb) === template && this.templates.delete(sizeMb));
    if (this.templates.size > TEMPLATES_KEPT) this.templates.delete(this.templates.keys().next().value!);
    return template;
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
      await makeImage(image, (part) => mkfsImage(part, PROBE_SIZE_MB));
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
