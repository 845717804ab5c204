/**
 * An alloc dir as Nomad's /v1/client/fs endpoints show it: list, stat, read
 * a range, stream, all confined to the alloc dir.
 *
 * Tasks write in their alloc dir, and a task may plant symlinks there. A
 * path is therefore checked twice: resolved (symlinks and `..` followed)
 * it must stay inside the alloc dir, for a clear error; then the file is
 * opened and the kernel's own path of the open descriptor
 * (/proc/self/fd/N) must be inside too. The second check is what keeps a
 * symlink swapped in between the two from leading outside: whatever was
 * opened is judged by where it really is.
 *
 * Like Nomad, listing and stat see a task's secrets/ dir, reading from it
 * is refused.
 */
import { constants, type Stats } from "node:fs";
import { open, readdir, lstat, readlink, realpath, type FileHandle } from "node:fs/promises";
import { posix, sep } from "node:path";
import type { AllocFileInfo } from "../../structs/api.ts";
import { FRAME_BYTES, streamSeries } from "./file-cursor.ts";

/** A read that is not framed (cat, readat) moves this much per chunk: fewer, larger reads for whole files. */
export const PLAIN_CHUNK_BYTES = 1024 * 1024;
/** Bytes read to guess a file's content type (Go's http.DetectContentType reads 512). */
const SNIFF_BYTES = 512;

/** A refusal with the HTTP status Nomad's fs endpoints give it. */
export class AllocFsError extends Error {
  override name = "AllocFsError";
  constructor(
    readonly status: 400 | 403 | 404,
    message: string,
  ) {
    super(message);
  }
}

const escapes = (path: string) => new AllocFsError(400, `Path escapes the alloc directory: ${path}`);

/** Go's os.FileMode.String(): "drwxr-xr-x", "-rw-r--r--", "Lrwxrwxrwx", "prw-------", ... */
export function goFileMode(stats: Stats): string {
  let kind = "";
  if (stats.isDirectory()) kind += "d";
  if (stats.isSymbolicLink()) kind += "L";
  if (stats.isBlockDevice()) kind += "D";
  if (stats.isCharacterDevice()) kind += "Dc";
  if (stats.isFIFO()) kind += "p";
  if (stats.isSocket()) kind += "S";
  if (stats.mode & 0o4000) kind += "u";
  if (stats.mode & 0o2000) kind += "g";
  if (stats.mode & 0o1000) kind += "t";
  const rwx = "rwxrwxrwx";
  let perms = "";
  for (let bit = 0; bit < 9; bit++) perms += stats.mode & (1 << (8 - bit)) ? rwx[bit] : "-";
  return `${kind || "-"}${perms}`;
}

function fileInfo(name: string, stats: Stats): AllocFileInfo {
  return { Name: name, IsDir: stats.isDirectory(), Size: stats.size, FileMode: goFileMode(stats), ModTime: stats.mtime.toISOString() };
}

/** Text as Go's sniffer would call it, else octet-stream; .json files are JSON (Nomad's special case). */
function contentType(path: string, head: Uint8Array): string {
  if (path.endsWith(".json")) return "application/json";
  if (head.length === 0) return "text/plain; charset=utf-8";
  const binary = head.some((byte) => byte < 0x09 || (byte > 0x0d && byte < 0x20 && byte !== 0x1b));
  return binary ? "application/octet-stream" : "text/plain; charset=utf-8";
}

function notFound(path: string, err: unknown): AllocFsError | unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "ENOENT" || code === "ENOTDIR") return new AllocFsError(404, `stat ${path}: no such file or directory`);
  if (code === "ELOOP") return new AllocFsError(400, `${path}: too many levels of symbolic links`);
  if (code === "EACCES") return new AllocFsError(403, `${path}: permission denied`);
  return err;
}

export class AllocFs {
  /** The alloc dir's own real path, resolved once. */
  private root: Promise<string>;

  constructor(allocDir: string) {
    this.root = realpath(allocDir);
  }

  private inside(root: string, real: string): boolean {
    return real === root || real.startsWith(root + sep);
  }

  /** `path` (relative to the alloc dir; "/" is the alloc dir) as an absolute path, `..` resolved, refused when it leaves. */
  private async joined(path: string): Promise<{ root: string; joined: string }> {
    const root = await this.root;
    const joined = posix.resolve(root, `./${path}`);
    if (!this.inside(root, joined)) throw escapes(path);
    return { root, joined };
  }

  /**
   * Opens `path` and proves where it really is: inside the alloc dir, and
   * (for reads) outside every task's secrets/. The caller closes the handle.
   */
  private async openChecked(path: string, flags: number, forReading: boolean): Promise<{ handle: FileHandle; real: string; root: string }> {
    const { root, joined } = await this.joined(path);
    let real: string;
    try {
      real = await realpath(joined);
    } catch (err) {
      throw notFound(path, err);
    }
    if (!this.inside(root, real)) throw escapes(path);
    let handle: FileHandle;
    try {
      // O_NONBLOCK: a FIFO the task made must not block the open.
      handle = await open(real, flags | constants.O_NONBLOCK);
    } catch (err) {
      throw notFound(path, err);
    }
    try {
      const opened = await readlink(`/proc/self/fd/${handle.fd}`);
      if (!this.inside(root, opened)) throw escapes(path);
      if (forReading && this.isSecret(root, opened)) throw new AllocFsError(403, `Reading secret file prohibited: ${path}`);
      return { handle, real: opened, root };
    } catch (err) {
      await handle.close();
      throw err;
    }
  }

  /** <task>/secrets and what is below it (any top-level dir but alloc/ is a task's). */
  private isSecret(root: string, real: string): boolean {
    const parts = real.slice(root.length + 1).split(sep);
    return parts.length >= 2 && parts[0] !== "alloc" && parts[1] === "secrets";
  }

  /** GET /v1/client/fs/ls: the entries of a directory, by name, symlinks shown as links. */
  async list(path: string): Promise<AllocFileInfo[]> {
    const { handle } = await this.openChecked(path, constants.O_RDONLY | constants.O_DIRECTORY, false).catch((err: unknown) => {
      if ((err as NodeJS.ErrnoException).code === "ENOTDIR") throw new AllocFsError(400, `${path} is not a directory`);
      throw err;
    });
    try {
      // Through the descriptor: the directory proven inside, not whatever the path names by now.
      const dir = `/proc/self/fd/${handle.fd}`;
      const names = (await readdir(dir)).sort();
      const out: AllocFileInfo[] = [];
      for (const name of names) {
        try {
          out.push(fileInfo(name, await lstat(`${dir}/${name}`)));
        } catch {
          // Removed while listing.
        }
      }
      return out;
    } finally {
      await handle.close();
    }
  }

  /** GET /v1/client/fs/stat: one file or directory, symlinks followed, with a guess of its content type. */
  async stat(path: string): Promise<AllocFileInfo> {
    const { handle, real, root } = await this.openChecked(path, constants.O_RDONLY, false);
    try {
      const stats = await handle.stat();
      const info = fileInfo(real === root ? "/" : posix.basename(real), stats);
      let head = new Uint8Array(0);
      if (stats.isFile() && !this.isSecret(root, real)) {
        const buffer = new Uint8Array(SNIFF_BYTES);
        head = buffer.subarray(0, (await handle.read(buffer, 0, SNIFF_BYTES, 0)).bytesRead);
      }
      return { ...info, ContentType: stats.isDirectory() ? "application/octet-stream" : contentType(path, head) };
    } finally {
      await handle.close();
    }
  }

  /**
   * A regular file's bytes as a stream: from `offset` (from the end with
   * origin "end"), at most `limit` bytes (0: all), framed unless `plain`,
   * and with `follow` until the client leaves or the file is deleted.
   */
  async read(
    path: string,
    request: { offset: number; origin: "start" | "end"; limit: number; plain: boolean; follow: boolean; signal?: AbortSignal },
  ): Promise<ReadableStream<Uint8Array>> {
    const { handle } = await this.openChecked(path, constants.O_RDONLY, true);
    let handed = false;
    try {
      const stats = await handle.stat();
      if (stats.isDirectory()) throw new AllocFsError(400, `file "${path}" is a directory`);
      if (!stats.isFile()) throw new AllocFsError(400, `file "${path}" is not a regular file`);
      const offset = request.origin === "end" ? Math.max(0, stats.size - request.offset) : request.offset;
      handed = true;
      return streamSeries(
        {
          // The one file, opened and checked above and handed to the stream: never re-resolved by path.
          open: async () => null,
          laterIndex: () => null,
          frameName: () => path,
          lastIndex: () => 0,
        },
        { index: 0, offset, handle },
        {
          plain: request.plain,
          follow: request.follow,
          chunkBytes: request.plain ? PLAIN_CHUNK_BYTES : FRAME_BYTES,
          limit: request.limit,
          isDone: () => false,
          ...(request.signal ? { signal: request.signal } : {}),
        },
      );
    } finally {
      if (!handed) await handle.close();
    }
  }
}
