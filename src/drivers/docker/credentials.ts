/**
 * Registry credentials for a pull: the job's `auth` block, else the docker
 * plugin's `auth { config }`, a Docker config.json whose `auths` map a
 * registry (as host, or as an https:// URL) to base64 "user:password" or to
 * username and password.
 */
import { readFileSync } from "node:fs";
import * as v from "valibot";
import type { RegistryCredentials } from "./registry.ts";

const DockerConfigFileSchema = v.object({
  auths: v.optional(v.record(v.string(), v.object({ auth: v.optional(v.string()), username: v.optional(v.string()), password: v.optional(v.string()) })), {}),
});

/** Docker Hub's key in config.json. */
const DOCKER_HUB_KEY = "https://index.docker.io/v1/";

export function credentialsFor(registry: string, jobAuth: RegistryCredentials | undefined, configFile: string | undefined): RegistryCredentials | undefined {
  if (jobAuth) return jobAuth;
  if (!configFile) return undefined;
  let parsed;
  try {
    parsed = v.parse(DockerConfigFileSchema, JSON.parse(readFileSync(configFile, "utf8")));
  } catch (err) {
    throw new Error(`plugin "docker" auth config ${configFile}: ${(err as Error).message}`);
  }
  const keys = registry === "docker.io" ? [DOCKER_HUB_KEY, "docker.io", "index.docker.io"] : [registry, `https://${registry}`, `http://${registry}`];
  const entry = keys.map((key) => parsed.auths[key] ?? parsed.auths[`${key}/`]).find((each) => each !== undefined);
  if (!entry) return undefined;
  if (entry.username !== undefined && entry.password !== undefined) return { username: entry.username, password: entry.password };
  if (!entry.auth) return undefined;
  const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
