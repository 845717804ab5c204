/**
 * Pulling an image into the store: its manifest (through an image index to
 * this host's linux/<arch> entry), its config, and each layer not stored
 * yet, every blob checked against its digest, each layer unpacked once.
 * Concurrent pulls of one image share one pull; a stored image is not pulled
 * again unless force_pull asks.
 */
import * as v from "valibot";
import { formatDuration } from "../../lib/duration.ts";
import { BYTES_PER_MIB } from "../../lib/units.ts";
import { hostArchitecture, ImageConfigSchema, IndexSchema, isIndex, MANIFEST_ACCEPT, ManifestSchema, type ImageConfig } from "./oci.ts";
import { parseReference } from "./reference.ts";
import { RegistryClient, RegistryError, type RegistryCredentials } from "./registry.ts";
import type { ImageStore, StoredImage } from "./store.ts";

export interface PullOptions {
  insecureRegistries: readonly string[];
  credentials?: RegistryCredentials | undefined;
  /** Docker's certs.d layout of registry CAs (registry.ts); /etc/docker/certs.d when unset. */
  certsDir?: string | undefined;
  /** image_pull_timeout. */
  timeoutMs: number;
  forcePull: boolean;
  /** Told when a download starts and ends (the task's "Driver" events). */
  progress?: ((message: string) => void) | undefined;
}

export class ImagePuller {
  private readonly pulling = new Map<string, Promise<StoredImage>>();

  constructor(private readonly store: ImageStore) {}

  /** The stored image for `reference`, pulled first when absent (or always with forcePull). */
  pull(reference: string, options: PullOptions): Promise<StoredImage> {
    const ref = parseReference(reference);
    const stored = options.forcePull ? null : this.store.findImage(ref.name);
    if (stored) return Promise.resolve(stored);
    // Nomad's own words, so tools that watch task events for them keep working.
    options.progress?.("Downloading image");
    let running = this.pulling.get(ref.name);
    if (!running) {
      running = this.fetch(ref.name, reference, options).finally(() => this.pulling.delete(ref.name));
      this.pulling.set(ref.name, running);
    }
    return running;
  }

  private async fetch(name: string, reference: string, options: PullOptions): Promise<StoredImage> {
    const ref = parseReference(reference);
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(new RegistryError(`pull of ${name} did not finish within image_pull_timeout (${formatDuration(options.timeoutMs)})`)),
      options.timeoutMs,
    );
    try {
      const client = new RegistryClient(ref, { insecureRegistries: options.insecureRegistries, credentials: options.credentials, certsDir: options.certsDir, signal: controller.signal });
      let answer = await client.manifest(ref.digest ?? ref.tag, MANIFEST_ACCEPT);
      let manifestDigest = this.store.writeBlobBytes(answer.bytes, `manifest of ${name}`, ref.digest);
      let body = parseJson(answer.bytes, `manifest of ${name}`);
      if (isIndex(answer.mediaType, body)) {
        const index = v.parse(IndexSchema, body);
        const arch = hostArchitecture();
        const entry = index.manifests.find((each) => each.platform?.os === "linux" && each.platform.architecture === arch);
        if (!entry) {
          const offered = index.manifests.map((each) => (each.platform ? `${each.platform.os}/${each.platform.architecture}` : "unknown")).join(", ");
          throw new RegistryError(`${name} has no linux/${arch} image (it has ${offered || "none"})`);
        }
        answer = await client.manifest(entry.digest, MANIFEST_ACCEPT);
        manifestDigest = this.store.writeBlobBytes(answer.bytes, `manifest of ${name} for linux/${arch}`, entry.digest);
        body = parseJson(answer.bytes, `manifest of ${name}`);
      }
      const manifest = v.parse(ManifestSchema, body);
      if (!this.store.hasBlob(manifest.config.digest)) await this.store.writeBlob(manifest.config.digest, await client.blob(manifest.config.digest), `config of ${name}`);
      readImageConfig(this.store, manifest.config.digest);
      await Promise.all(
        manifest.layers.map(async (layer) => {
          if (this.store.hasLayer(layer.digest)) return;
          if (!this.store.hasBlob(layer.digest)) await this.store.writeBlob(layer.digest, await client.blob(layer.digest), `layer of ${name}`);
          await this.store.unpack(layer.digest);
        }),
      );
      const image = { name, manifest: manifestDigest, config: manifest.config.digest, layers: manifest.layers.map((layer) => layer.digest), lastUsed: Date.now() };
      this.store.saveImage(image);
      const bytes = manifest.layers.reduce((sum, layer) => sum + layer.size, 0);
      options.progress?.(`Downloaded image ${name}: ${manifest.layers.length} layers, ${(bytes / BYTES_PER_MIB).toFixed(1)} MiB`);
      return image;
    } catch (err) {
      // A timeout ends whatever was under way (a body half read): the timeout is the error.
      if (controller.signal.aborted && controller.signal.reason instanceof Error) throw controller.signal.reason;
      if (err instanceof v.ValiError) throw new RegistryError(`${name}: the registry's answer is not an image manifest: ${err.message}`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }
}

function parseJson(bytes: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new RegistryError(`${what} is not JSON: ${(err as Error).message}`);
  }
}

/** The stored image config `digest`, checked. */
export function readImageConfig(store: ImageStore, digest: string): ImageConfig {
  const parsed = v.safeParse(ImageConfigSchema, parseJson(store.readBlob(digest), `image config ${digest}`));
  if (!parsed.success) throw new RegistryError(`image config ${digest}: ${parsed.issues.map((issue) => `${v.getDotPath(issue) ?? "config"}: ${issue.message}`).join(", ")}`);
  return parsed.output;
}
