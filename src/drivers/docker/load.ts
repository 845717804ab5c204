/**
 * `load`: an image from a `docker save` tarball (Docker's manifest.json with
 * Config, RepoTags and Layers paths, in the classic layout or the OCI one
 * Docker 25 writes) into the store, as a pull would leave it: the config and
 * each layer stored by the digest of its bytes, each layer unpacked once,
 * and an OCI manifest written for it. An image already stored under the
 * name is used as it is.
 */
import { readFileSync, rmSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import * as tar from "tar";
import * as v from "valibot";
import { MEDIA } from "./oci.ts";
import { parseReference } from "./reference.ts";
import type { ImageStore, StoredImage } from "./store.ts";

const SaveManifestSchema = v.array(v.object({ Config: v.string(), RepoTags: v.nullish(v.array(v.string())), Layers: v.array(v.string()) }));
const LAYER_MEDIA_TYPE = "application/vnd.oci.image.layer.v1.tar";
const CONFIG_MEDIA_TYPE = "application/vnd.oci.image.config.v1+json";

export async function loadImage(store: ImageStore, tarball: string, name: string): Promise<StoredImage> {
  const stored = store.findImage(name);
  if (stored) return stored;
  const scratch = store.scratchDir();
  try {
    try {
      await tar.x({ file: tarball, cwd: scratch, strict: true });
    } catch (err) {
      throw new Error(`load ${tarball}: ${(err as Error).message}`);
    }
    const inside = (path: string) => {
      const full = resolve(scratch, path);
      if (relative(scratch, full).startsWith("..")) throw new Error(`load ${tarball}: ${path} points outside the tarball`);
      return full;
    };
    let entries;
    try {
      entries = v.parse(SaveManifestSchema, JSON.parse(readFileSync(join(scratch, "manifest.json"), "utf8")));
    } catch (err) {
      throw new Error(`load ${tarball}: no docker save manifest.json (${(err as Error).message})`);
    }
    const tagged = entries.find((entry) => (entry.RepoTags ?? []).some((tag) => parseReference(tag).name === name));
    const entry = tagged ?? (entries.length === 1 ? entries[0] : undefined);
    if (!entry) throw new Error(`load ${tarball}: it holds ${entries.length} images and none is tagged ${name}`);
    const configBytes = readFileSync(inside(entry.Config));
    const config = store.writeBlobBytes(configBytes, "config");
    const layers: { digest: string; size: number }[] = [];
    for (const path of entry.Layers) {
      const file = inside(path);
      const size = statSync(file).size;
      const digest = await store.importFile(file);
      await store.unpack(digest);
      layers.push({ digest, size });
    }
    const manifest = {
      schemaVersion: 2,
      mediaType: MEDIA.ociManifest,
      config: { mediaType: CONFIG_MEDIA_TYPE, digest: config, size: configBytes.byteLength },
      layers: layers.map((layer) => ({ mediaType: LAYER_MEDIA_TYPE, ...layer })),
    };
    const image = { name, manifest: store.writeBlobBytes(Buffer.from(JSON.stringify(manifest)), "manifest"), config, layers: layers.map((layer) => layer.digest), lastUsed: Date.now() };
    store.saveImage(image);
    return image;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
