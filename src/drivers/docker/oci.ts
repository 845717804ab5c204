/**
 * The OCI (and Docker v2 schema 2) documents drover reads: image indexes
 * (manifest lists), image manifests and image configs, and the media types
 * that tell them apart. Only the fields drover uses are checked; the rest
 * pass through.
 */
import * as v from "valibot";
import { DIGEST } from "./reference.ts";

export const MEDIA = {
  ociIndex: "application/vnd.oci.image.index.v1+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json",
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
} as const;

/** What a manifest request accepts, most wanted first. */
export const MANIFEST_ACCEPT = [MEDIA.ociIndex, MEDIA.dockerList, MEDIA.ociManifest, MEDIA.dockerManifest].join(", ");

const Digest = v.pipe(v.string(), v.regex(DIGEST, "must be sha256: and 64 hex digits"));

export const DescriptorSchema = v.object({
  mediaType: v.optional(v.string(), ""),
  digest: Digest,
  size: v.pipe(v.number(), v.integer(), v.minValue(0)),
  platform: v.optional(v.object({ os: v.string(), architecture: v.string(), variant: v.optional(v.string()) })),
});
export type Descriptor = v.InferOutput<typeof DescriptorSchema>;

export const IndexSchema = v.object({
  schemaVersion: v.literal(2),
  mediaType: v.optional(v.string()),
  manifests: v.array(DescriptorSchema),
});

export const ManifestSchema = v.object({
  schemaVersion: v.literal(2),
  mediaType: v.optional(v.string()),
  config: DescriptorSchema,
  layers: v.array(DescriptorSchema),
});
export type Manifest = v.InferOutput<typeof ManifestSchema>;

const Strings = v.nullish(v.array(v.string()));

/** The image config's runtime part (Docker keeps it under "config"). */
export const ImageConfigSchema = v.object({
  architecture: v.optional(v.string()),
  os: v.optional(v.string()),
  config: v.nullish(
    v.object({
      Env: Strings,
      Entrypoint: Strings,
      Cmd: Strings,
      WorkingDir: v.nullish(v.string()),
      User: v.nullish(v.string()),
      StopSignal: v.nullish(v.string()),
    }),
  ),
  rootfs: v.optional(v.object({ type: v.string(), diff_ids: v.array(Digest) })),
});
export type ImageConfig = v.InferOutput<typeof ImageConfigSchema>;

/** Whether a manifest body (by its media type, or its shape when none is given) is an index. */
export function isIndex(mediaType: string, body: unknown): boolean {
  if (mediaType === MEDIA.ociIndex || mediaType === MEDIA.dockerList) return true;
  if (mediaType === MEDIA.ociManifest || mediaType === MEDIA.dockerManifest) return false;
  return typeof body === "object" && body !== null && "manifests" in body;
}

/** This host's platform in OCI's words. */
export function hostArchitecture(): string {
  return process.arch === "x64" ? "amd64" : process.arch;
}
