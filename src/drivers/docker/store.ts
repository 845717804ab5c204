/**
 * The image store in the agent's data dir, shared by every task:
 *
 *   <root>/blobs/sha256/<hex>   manifests, configs, and layer blobs until unpacked;
 *                               written to a temporary name, hashed on the way,
 *                               renamed only when the digest is the one asked for
 *   <root>/layers/<hex>/        a layer unpacked once (overlayfs format), named by its
 *                               blob's digest; a task's lower dir, never written again
 *   <root>/images/<name>.json   an image name -> manifest, config and layer digests,
 *                               and when a task last used it
 *
 * A layer blob is deleted once unpacked: a layer has one copy on disk.
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import { writeFileAtomic } from "../../runtime/fs.ts";
import { DIGEST } from "./reference.ts";
import { unpackLayer } from "./unpack.ts";

/** A blob whose content does not hash to the digest it was asked for under. */
export class DigestMismatchError extends Error {
  override name = "DigestMismatchError";
}

const StoredImageSchema = v.object({
  name: v.string(),
  manifest: v.pipe(v.string(), v.regex(DIGEST)),
  config: v.pipe(v.string(), v.regex(DIGEST)),
  /** Bottom first, as the manifest lists them. */
  layers: v.array(v.pipe(v.string(), v.regex(DIGEST))),
  /** Milliseconds since the epoch when a task last started with or stopped using it. */
  lastUsed: v.number(),
});
export type StoredImage = v.InferOutput<typeof StoredImageSchema>;

/** A finished blob or layer's name; anything else is a write or unpack under way. */
const HEX = /^[a-f0-9]{64}$/;
const hexOf = (digest: string) => digest.slice("sha256:".length);

export class ImageStore {
  private readonly blobs: string;
  private readonly layers: string;
  private readonly images: string;
  /** Unpacks under way, so two tasks of one image unpack each layer once. */
  private readonly unpacking = new Map<string, Promise<string>>();

  constructor(readonly root: string) {
    this.blobs = join(root, "blobs", "sha256");
    this.layers = join(root, "layers");
    this.images = join(root, "images");
    for (const dir of [this.blobs, this.layers, this.images]) mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  blobPath(digest: string): string {
    return join(this.blobs, hexOf(digest));
  }

  hasBlob(digest: string): boolean {
    return existsSync(this.blobPath(digest));
  }

  /** Stores `chunks` as blob `digest`; nothing is kept unless the content hashes to it. */
  async writeBlob(digest: string, chunks: AsyncIterable<Uint8Array>, what: string): Promise<void> {
    const temporary = `${this.blobPath(digest)}.${process.pid}.${Math.random().toString(36).slice(2)}.part`;
    const hash = createHash("sha256");
    const file = await open(temporary, "w", 0o600);
    try {
      for await (const chunk of chunks) {
        hash.update(chunk);
        await file.write(chunk);
      }
    } catch (err) {
      await file.close();
      rmSync(temporary, { force: true });
      throw err;
    }
    await file.close();
    const actual = `sha256:${hash.digest("hex")}`;
    if (actual !== digest) {
      rmSync(temporary, { force: true });
      throw new DigestMismatchError(`${what} ${digest}: the content received hashes to ${actual}; refused`);
    }
    renameSync(temporary, this.blobPath(digest));
  }

  /** Stores small bytes (a manifest, a config); checks them against `digest` when given. Returns the digest. */
  writeBlobBytes(bytes: Uint8Array, what: string, digest?: string): string {
    const actual = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    if (digest !== undefined && actual !== digest) throw new DigestMismatchError(`${what} ${digest}: the content received hashes to ${actual}; refused`);
    if (!this.hasBlob(actual)) writeFileAtomic(this.blobPath(actual), bytes, 0o600);
    return actual;
  }

  /** Moves file `path` (on the store's file system) into the store under its own digest; returns it. */
  async importFile(path: string): Promise<string> {
    const hash = createHash("sha256");
    for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
    const digest = `sha256:${hash.digest("hex")}`;
    renameSync(path, this.blobPath(digest));
    return digest;
  }

  /** A fresh directory for work on the store's file system (a tarball being loaded); the caller removes it. */
  scratchDir(): string {
    return mkdtempSync(join(this.root, ".scratch-"));
  }

  readBlob(digest: string): Uint8Array {
    return readFileSync(this.blobPath(digest));
  }

  layerDir(digest: string): string {
    return join(this.layers, hexOf(digest));
  }

  hasLayer(digest: string): boolean {
    return existsSync(this.layerDir(digest));
  }

  /** Unpacks layer blob `digest` once (later callers share the first unpack) and deletes the blob. */
  unpack(digest: string): Promise<string> {
    const target = this.layerDir(digest);
    if (existsSync(target)) {
      // Already unpacked (another image, an earlier load): the blob is a second copy.
      rmSync(this.blobPath(digest), { force: true });
      return Promise.resolve(target);
    }
    let running = this.unpacking.get(digest);
    if (!running) {
      running = (async () => {
        const temporary = join(this.layers, `.${hexOf(digest)}.${process.pid}.${Math.random().toString(36).slice(2)}`);
        mkdirSync(temporary, { mode: 0o755 });
        try {
          await unpackLayer(this.blobPath(digest), temporary);
          renameSync(temporary, target);
        } catch (err) {
          rmSync(temporary, { recursive: true, force: true });
          throw new Error(`unpack layer ${digest}: ${(err as Error).message}`);
        }
        rmSync(this.blobPath(digest), { force: true });
        return target;
      })().finally(() => this.unpacking.delete(digest));
      this.unpacking.set(digest, running);
    }
    return running;
  }

  private imageFile(name: string): string {
    return join(this.images, `${encodeURIComponent(name)}.json`);
  }

  saveImage(image: StoredImage): void {
    writeFileAtomic(this.imageFile(image.name), JSON.stringify(image), 0o600);
  }

  /** The stored image `name`, complete on disk (config and every layer), or null. */
  findImage(name: string): StoredImage | null {
    let image: StoredImage;
    try {
      image = v.parse(StoredImageSchema, JSON.parse(readFileSync(this.imageFile(name), "utf8")));
    } catch {
      return null;
    }
    return this.hasBlob(image.config) && image.layers.every((layer) => this.hasLayer(layer)) ? image : null;
  }

  listImages(): StoredImage[] {
    return readdirSync(this.images)
      .filter((file) => file.endsWith(".json"))
      .map((file) => this.findImage(decodeURIComponent(file.slice(0, -".json".length))))
      .filter((image): image is StoredImage => image !== null);
  }

  removeImage(name: string): void {
    rmSync(this.imageFile(name), { force: true });
  }

  /** Deletes blobs and layers no stored image names and `keep` does not hold; returns the layers deleted. */
  sweep(keep: ReadonlySet<string>): string[] {
    const named = new Set(keep);
    for (const image of this.listImages()) for (const digest of [image.manifest, image.config, ...image.layers]) named.add(digest);
    const removed: string[] = [];
    for (const hex of readdirSync(this.layers)) {
      if (!HEX.test(hex) || named.has(`sha256:${hex}`)) continue;
      rmSync(join(this.layers, hex), { recursive: true, force: true });
      removed.push(`sha256:${hex}`);
    }
    for (const hex of readdirSync(this.blobs)) {
      if (!HEX.test(hex) || named.has(`sha256:${hex}`)) continue;
      rmSync(join(this.blobs, hex), { force: true });
    }
    return removed;
  }
}
