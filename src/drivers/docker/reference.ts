/**
 * Image references as Docker reads them: `[registry/]repository[:tag][@digest]`.
 * A first path component is a registry when it has a "." or ":" or is
 * "localhost"; otherwise the image is Docker Hub's, where a one-part name
 * lives under "library/". Without tag or digest the tag is "latest".
 */
import { ValidationError } from "../../lib/validation.ts";

/** Docker Hub's name in references, and where its API answers. */
const DOCKER_HUB = "docker.io";
const DOCKER_HUB_API = "registry-1.docker.io";
const DEFAULT_TAG = "latest";

const REPOSITORY = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
export const DIGEST = /^sha256:[a-f0-9]{64}$/;

export interface ImageReference {
  /** The registry as written (docker.io for Docker Hub). */
  registry: string;
  /** host[:port] the distribution API is reached at. */
  host: string;
  repository: string;
  tag: string;
  digest?: string;
  /** The canonical name: registry/repository[:tag][@digest]. */
  name: string;
}

export function parseReference(text: string, field = "image"): ImageReference {
  const bad = (why: string) => new ValidationError(field, [`"${text}" is not an image reference: ${why}`]);
  let rest = text.trim();
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw bad("the digest must be sha256: and 64 hex digits");
  }
  const slash = rest.indexOf("/");
  const first = slash < 0 ? "" : rest.slice(0, slash);
  const hasRegistry = first.includes(".") || first.includes(":") || first === "localhost";
  const registry = hasRegistry ? first : DOCKER_HUB;
  let path = hasRegistry ? rest.slice(slash + 1) : rest;
  let tag = DEFAULT_TAG;
  const colon = path.lastIndexOf(":");
  if (colon >= 0) {
    tag = path.slice(colon + 1);
    path = path.slice(0, colon);
    if (!TAG.test(tag)) throw bad(`tag "${tag}" is not valid`);
  }
  if (registry === DOCKER_HUB && !path.includes("/")) path = `library/${path}`;
  if (!REPOSITORY.test(path)) throw bad(`repository "${path}" must be lowercase letters, digits and separators`);
  const name = `${registry}/${path}${colon >= 0 || !digest ? `:${tag}` : ""}${digest ? `@${digest}` : ""}`;
  return { registry, host: registry === DOCKER_HUB ? DOCKER_HUB_API : registry, repository: path, tag, ...(digest ? { digest } : {}), name };
}
