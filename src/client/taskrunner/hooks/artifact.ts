/**
 * Fetches the task's artifacts into its directory before it first starts
 * (Nomad's artifact hook, go-getter's http, https and file sources):
 *
 *   for each artifact: download (or copy) into the task's tmp/ ──> size limit,
 *     checksum ──> unpack an archive into `destination` (mode "any"/"dir"),
 *     or place the file at it (mode "file" / not an archive) ──> chmod
 *   failure: retried ARTIFACT_ATTEMPTS times, then the task fails to start
 *     (recoverable: the restart policy may try again later)
 *
 * Nothing is written outside the task dir: destinations are resolved
 * against it and checked after symlinks, and archives are unpacked with
 * node-tar, which refuses absolute paths, `..` and writes through links.
 * Done once per alloc: a restart or a restored runner does not fetch again.
 */
import { createHash } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { chmod, copyFile, mkdir, open, realpath, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { Readable, Transform } from "node:stream";
import { extract } from "tar";
import type { TaskArtifact } from "../../../structs/job.ts";
import { taskEvent } from "../task-state.ts";
import type { PrestartRequest, PrestartResponse, TaskHook } from "./hook.ts";
import { sleepUnlessAborted } from "../../../lib/timeout.ts";

/** Tries per artifact: a flaky server gets a second chance before the task fails (go-getter has none; Nomad retries the task). */
export const ARTIFACT_ATTEMPTS = 3;
/** Pause between tries, long enough for a restarting server. */
export const ARTIFACT_RETRY_DELAY_MS = 1_000;
/** The most one artifact may be: a wrong URL must not fill the node's disk. */
export const ARTIFACT_MAX_BYTES = 2 * 1024 ** 3;
/** How long one download may take before it counts as failed. */
export const ARTIFACT_TIMEOUT_MS = 10 * 60_000;

/** The hook's limits; tests shrink them. */
export interface ArtifactLimits {
  attempts: number;
  retryDelayMs: number;
  maxBytes: number;
}
export const DEFAULT_ARTIFACT_LIMITS: ArtifactLimits = { attempts: ARTIFACT_ATTEMPTS, retryDelayMs: ARTIFACT_RETRY_DELAY_MS, maxBytes: ARTIFACT_MAX_BYTES };

const ARCHIVES = [".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz", ".zip"] as const;
/** node-tar reads these; the others are named in the error. */
const READABLE_ARCHIVES = new Set([".tar.gz", ".tgz", ".tar"]);

export class ArtifactError extends Error {
  override name = "ArtifactError";
}

/** Resolves `dest` inside `root`, refusing anything that lands outside it (symlinks included). */
export async function insideTaskDir(root: string, dest: string): Promise<string> {
  const target = resolve(root, dest);
  const outside = (path: string, base: string) => relative(base, path).startsWith("..") || resolve(base, relative(base, path)) !== path;
  if (outside(target, root)) throw new ArtifactError(`destination "${dest}" is outside the task directory`);
  // The deepest existing ancestor, followed through links, must still be inside.
  let existing = target;
  while (!existsSync(existing)) existing = dirname(existing);
  const real = await realpath(existing);
  if (outside(real, await realpath(root))) throw new ArtifactError(`destination "${dest}" leads outside the task directory`);
  return target;
}

function archiveOf(artifact: TaskArtifact): string | undefined {
  const option = artifact.GetterOptions.archive;
  if (option === "false") return undefined;
  if (option) return `.${option.replace(/^\./, "")}`;
  const path = artifact.GetterSource.split("?")[0]!.toLowerCase();
  return ARCHIVES.find((ext) => path.endsWith(ext));
}

/** `checksum = "sha256:abc..."` (go-getter's form); md5, sha1, sha256 and sha512. */
function checksumOf(artifact: TaskArtifact): { algorithm: string; hex: string } | undefined {
  const option = artifact.GetterOptions.checksum;
  if (!option) return undefined;
  const [algorithm, hex] = option.includes(":") ? option.split(":", 2) : ["sha256", option];
  if (!["md5", "sha1", "sha256", "sha512"].includes(algorithm!)) throw new ArtifactError(`checksum type "${algorithm}" is not one of md5, sha1, sha256, sha512`);
  return { algorithm: algorithm!, hex: hex!.toLowerCase() };
}

/** Stops a stream that grows past the limit. */
function sizeLimit(source: string, maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > maxBytes) done(new ArtifactError(`${source} is larger than ${maxBytes} bytes`));
      else done(null, chunk);
    },
  });
}

async function fetchTo(source: string, file: string, signal: AbortSignal, maxBytes: number): Promise<void> {
  const localPath = source.startsWith("file://") ? new URL(source).pathname : source.startsWith("/") ? source : undefined;
  if (localPath !== undefined) {
    const info = await stat(localPath).catch(() => undefined);
    if (!info?.isFile()) throw new ArtifactError(`${localPath}: no such file`);
    if (info.size > maxBytes) throw new ArtifactError(`${localPath} is larger than ${maxBytes} bytes`);
    await copyFile(localPath, file);
    return;
  }
  if (!/^https?:\/\//.test(source)) throw new ArtifactError(`source "${source}": only http, https and local files are supported by drover`);
  const response = await fetch(source, { signal: AbortSignal.any([signal, AbortSignal.timeout(ARTIFACT_TIMEOUT_MS)]) });
  if (!response.ok || !response.body) throw new ArtifactError(`GET ${source}: ${response.status} ${response.statusText}`);
  const length = Number(response.headers.get("content-length") ?? 0);
  if (length > maxBytes) throw new ArtifactError(`${source} is larger than ${maxBytes} bytes`);
  await pipeline(Readable.from(response.body as unknown as AsyncIterable<Uint8Array>), sizeLimit(source, maxBytes), createWriteStream(file));
}

async function verify(file: string, artifact: TaskArtifact): Promise<void> {
  const expected = checksumOf(artifact);
  if (!expected) return;
  const hash = createHash(expected.algorithm);
  const handle = await open(file);
  try {
    for await (const chunk of handle.createReadStream()) hash.update(chunk as Buffer);
  } finally {
    await handle.close();
  }
  const actual = hash.digest("hex");
  if (actual !== expected.hex) throw new ArtifactError(`checksum mismatch: ${expected.algorithm} is ${actual}, expected ${expected.hex}`);
}

/** One artifact into the task dir `root`, staged in `tmpDir`. */
export async function fetchArtifact(artifact: TaskArtifact, root: string, tmpDir: string, signal: AbortSignal, maxBytes: number): Promise<void> {
  const dest = await insideTaskDir(root, artifact.RelativeDest);
  const staged = join(tmpDir, `.artifact-${process.pid}-${Date.now()}-${basename(artifact.GetterSource.split("?")[0]!) || "download"}`);
  try {
    await fetchTo(artifact.GetterSource, staged, signal, maxBytes);
    await verify(staged, artifact);
    const archive = artifact.GetterMode === "file" ? undefined : archiveOf(artifact);
    if (archive) {
      if (!READABLE_ARCHIVES.has(archive)) throw new ArtifactError(`${archive} archives are not supported by drover (tar, tar.gz and tgz are)`);
      await mkdir(dest, { recursive: true });
      await extract({ file: staged, cwd: dest, strict: true, preservePaths: false, preserveOwner: false });
    } else if (artifact.GetterMode === "dir") {
      throw new ArtifactError(`mode "dir" needs an archive; ${artifact.GetterSource} is not one`);
    } else {
      // mode "file" names the file; mode "any" puts the file in the destination directory.
      const target = artifact.GetterMode === "file" ? dest : join(dest, basename(artifact.GetterSource.split("?")[0]!));
      await mkdir(dirname(target), { recursive: true });
      await insideTaskDir(root, relative(root, target));
      await rename(staged, target);
      if (artifact.GetterOptions.mode) await chmod(target, Number.parseInt(artifact.GetterOptions.mode, 8));
    }
  } finally {
    await rm(staged, { force: true });
  }
}

export function artifactHook(limits: ArtifactLimits = DEFAULT_ARTIFACT_LIMITS): TaskHook {
  return {
    name: "artifacts",
    async prestart(req: PrestartRequest): Promise<PrestartResponse> {
      if (req.task.Artifacts.length === 0) return { done: true };
      req.emitEvent(taskEvent("Downloading Artifacts", { Message: "Client is downloading artifacts" }));
      for (const artifact of req.task.Artifacts) {
        for (let attempt = 1; ; attempt++) {
          try {
            await fetchArtifact(artifact, req.taskDir.root, req.taskDir.tmp, req.killed, limits.maxBytes);
            break;
          } catch (err) {
            const message = `failed to download artifact "${artifact.GetterSource}": ${err instanceof Error ? err.message : String(err)}`;
            if (attempt >= limits.attempts || req.killed.aborted) {
              req.emitEvent(taskEvent("Failed Artifact Download", { DownloadError: message, Message: message }));
              throw new ArtifactError(message);
            }
            await sleepUnlessAborted(limits.retryDelayMs, req.killed);
          }
        }
      }
      return { done: true };
    },
  };
}
