/**
 * How Docker turns an image config and a job's keys into what runs:
 *
 *   argv  job entrypoint given: it, then the job's command+args (the image's Cmd is dropped);
 *         else the image's Entrypoint, then the job's command+args, else the image's Cmd
 *         (Nomad: command then args; args alone replace Cmd too)
 *   env   the image's Env, then the task's over it
 *   cwd   work_dir, else WorkingDir, else /
 *   user  the task's user, else the image's User, else root; names resolved in the image's
 *         own /etc/passwd and /etc/group (a uid without an entry gets gid 0, as in Docker)
 */
import { lstatSync, readFileSync } from "node:fs";
import { join, posix } from "node:path";
import { ValidationError } from "../../lib/validation.ts";
import { MAX_ID } from "../../runtime/libc.ts";
import type { ImageConfig } from "./oci.ts";

export interface ImageRun {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** "uid:gid". */
  user: string;
}

export interface JobRunKeys {
  entrypoint?: string[] | undefined;
  command?: string | undefined;
  args: string[];
  workDir?: string | undefined;
  user?: string | undefined;
  env: Readonly<Record<string, string>>;
}

export function imageRun(image: ImageConfig, layers: readonly string[], job: JobRunKeys): ImageRun {
  const config = image.config ?? {};
  const jobCmd = job.command !== undefined ? [job.command, ...job.args] : job.args.length > 0 ? job.args : undefined;
  const argv = job.entrypoint ? [...job.entrypoint, ...(jobCmd ?? [])] : [...(config.Entrypoint ?? []), ...(jobCmd ?? config.Cmd ?? [])];
  if (argv.length === 0) throw new ValidationError("config", ["command: the image has no Entrypoint or Cmd, so the job must give command or entrypoint"]);
  const env: Record<string, string> = {};
  for (const entry of config.Env ?? []) {
    const at = entry.indexOf("=");
    if (at > 0) env[entry.slice(0, at)] = entry.slice(at + 1);
  }
  Object.assign(env, job.env);
  const cwd = posix.normalize(job.workDir ?? (config.WorkingDir || "/")).replace(/(.)\/$/, "$1");
  if (!cwd.startsWith("/")) throw new ValidationError("config", [`work_dir: "${cwd}" must be an absolute path`]);
  return { argv, env, cwd, user: resolveUser(job.user || config.User || "", layers) };
}

/** The 0/0 character device overlayfs reads as "deleted". */
function isWhiteout(path: string): boolean {
  const stat = lstatSync(path, { throwIfNoEntry: false });
  return stat !== undefined && stat.isCharacterDevice() && stat.rdev === 0;
}

/** A file of the image as the task will see it: the top layer that has it, unless one above deleted it. */
function imageFile(layers: readonly string[], path: string): string | null {
  const parents = path.split("/").slice(0, -1);
  for (const layer of [...layers].reverse()) {
    // Never through a layer's own symlink (etc -> /etc would read the host's).
    if (parents.some((_, i) => lstatSync(join(layer, ...parents.slice(0, i + 1)), { throwIfNoEntry: false })?.isSymbolicLink())) return null;
    const full = join(layer, path);
    if (isWhiteout(full)) return null;
    const stat = lstatSync(full, { throwIfNoEntry: false });
    if (stat?.isFile()) return readFileSync(full, "utf8");
    if (stat) return null;
  }
  return null;
}

/** name -> [id, primary gid] from a passwd- or group-format file. */
function entries(text: string | null): Map<string, [number, number]> {
  const found = new Map<string, [number, number]>();
  for (const line of (text ?? "").split("\n")) {
    const fields = line.split(":");
    if (fields.length < 3 || !/^\d+$/.test(fields[2]!)) continue;
    found.set(fields[0]!, [Number(fields[2]), /^\d+$/.test(fields[3] ?? "") ? Number(fields[3]) : 0]);
  }
  return found;
}

function resolveUser(spec: string, layers: readonly string[]): string {
  if (spec === "") return "0:0";
  const [userPart, groupPart] = spec.split(":", 2) as [string, string | undefined];
  const passwd = entries(imageFile(layers, "etc/passwd"));
  let uid: number;
  let gid: number;
  if (/^\d+$/.test(userPart)) {
    uid = Number(userPart);
    gid = [...passwd.values()].find(([id]) => id === uid)?.[1] ?? 0;
  } else {
    const entry = passwd.get(userPart);
    if (!entry) throw new ValidationError("user", [`"${userPart}" is not in the image's /etc/passwd`]);
    [uid, gid] = entry;
  }
  if (groupPart !== undefined && groupPart !== "") {
    if (/^\d+$/.test(groupPart)) gid = Number(groupPart);
    else {
      const group = entries(imageFile(layers, "etc/group")).get(groupPart);
      if (!group) throw new ValidationError("user", [`group "${groupPart}" is not in the image's /etc/group`]);
      gid = group[0];
    }
  }
  // Past 32 bits the chown of the task's secrets fails; all ones would leave the task root (setresuid's "unchanged").
  for (const [what, id] of [["uid", uid], ["gid", gid]] as const) {
    if (id > MAX_ID) throw new ValidationError("user", [`${what} ${id} is out of range (at most ${MAX_ID})`]);
  }
  return `${uid}:${gid}`;
}
