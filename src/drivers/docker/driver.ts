/**
 * `driver = "docker"` with no Docker daemon: the image is pulled (or loaded
 * from a `docker save` tarball) into the agent's image store, and the task
 * runs like an exec task (same executor, nsenter role, namespaces, cgroups,
 * capabilities and syscall filter) whose root is an overlay of the image's
 * layers under an upper dir of its own in the task dir. The overlay is
 * mounted in the task's mount namespace, so it goes when the task does;
 * reattach after an agent restart is the executor's, as for exec.
 *
 * The image config is applied as Docker applies it (image-run.ts), the job's
 * privileges and limits as Docker applies them (security.ts). Job keys this
 * driver does not serve are refused by name when the job registers
 * (structs/driver-config.ts); network_mode: drivers/network.ts.
 *
 * Image GC (plugin "docker" gc { image, image_delay }): when a task is
 * destroyed, its image is removed image_delay later unless a task uses it
 * again by then; layers no remaining image names are deleted.
 */
import { closeSync, constants, fchownSync, lchownSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { basename, dirname, join, posix, relative, resolve } from "node:path";
import * as v from "valibot";
import { parseDuration } from "../../lib/duration.ts";
import { isSignal, signalName, signalNumber } from "../../lib/signals.ts";
import { ValidationError } from "../../lib/validation.ts";
import { executorFiles } from "../../executor/files.ts";
import type { IsolationSupport } from "../../nsenter/detect.ts";
import type { IsolationSpecInput, VolumeBind } from "../../nsenter/spec.ts";
import { DockerDriverConfigSchema } from "../../structs/driver-config.ts";
import { taskIdOf, type DriverEvents, type Fingerprint, type ParsedTaskConfig, type TaskConfig, type TaskHandle } from "../driver.ts";
import { ExecutorDriver, type ExecutorDriverOptions } from "../executor-driver.ts";
import { credentialsFor } from "./credentials.ts";
import { imageRun } from "./image-run.ts";
import { loadImage } from "./load.ts";
import { ImagePuller, readImageConfig } from "./pull.ts";
import { parseReference } from "./reference.ts";
import { containerSecurity, type DockerSecurityPlugin, withInit } from "./security.ts";
import { ImageStore, type StoredImage } from "./store.ts";
import { isolatedNetwork, networkOf } from "../network.ts";

/** Where a task's own layer lives in its task dir (hidden from the task by the overlay on top). */
const ROOTFS_DIR = ".rootfs";

/**
 * Refuses a volume whose path below the alloc dir passes a symlink: a task
 * may have planted one there (alloc/data/x -> /) for a later task's bind.
 */
function requireNoSymlinks(allocRoot: string, hostPath: string, asWritten: string): void {
  let current = allocRoot;
  for (const part of relative(allocRoot, hostPath).split("/")) {
    current = join(current, part);
    if (lstatSync(current, { throwIfNoEntry: false })?.isSymbolicLink()) {
      throw new ValidationError("config", [`volumes: "${asWritten}" passes a symlink (${current}); only real directories within the alloc dir can be mounted`]);
    }
  }
}

/**
 * Gives the task's secrets/ (and what prestart hooks wrote there: templates,
 * identities) to the image's user, mode unchanged (0700): a non-root
 * container reads its secrets as under Nomad, where secrets/ is world-open,
 * while here no other user of the host can. Through a descriptor, never
 * following a link a task left there.
 */
function giveSecretsTo(secrets: string, user: string): void {
  const [uid, gid] = user.split(":").map(Number) as [number, number];
  const dir = openSync(secrets, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    fchownSync(dir, uid, gid);
    for (const name of readdirSync(`/proc/self/fd/${dir}`)) lchownSync(`/proc/self/fd/${dir}/${name}`, uid, gid);
  } finally {
    closeSync(dir);
  }
}

export const DockerConfigSchema = v.omit(DockerDriverConfigSchema, ["command", "args"]);
export type DockerConfig = v.InferOutput<typeof DockerConfigSchema>;

export interface DockerPluginOptions extends DockerSecurityPlugin {
  insecureRegistries: readonly string[];
  /** auth { config }: a Docker config.json with registry credentials. */
  authConfig?: string | undefined;
  /** certs_dir: Docker's certs.d layout of registry CAs; /etc/docker/certs.d when unset. */
  certsDir?: string | undefined;
  gc: { image: boolean; imageDelayMs: number };
}

export interface DockerOptions extends ExecutorDriverOptions {
  support: IsolationSupport;
  /** <data_dir>/images. */
  imageDir: string;
  plugin: DockerPluginOptions;
}

export class DockerDriver extends ExecutorDriver<DockerConfig> {
  readonly name = "docker";
  protected readonly configSchema = DockerConfigSchema;
  protected readonly cgroupPlacement = "isolated";
  readonly store: ImageStore;
  private readonly puller: ImagePuller;
  /** The image's StopSignal of a task being started, for its handle when the job names no kill_signal. */
  private readonly stopSignals = new Map<string, string>();
  /** Layer digests each task of this driver runs on (started, or found again after a restart). */
  private readonly layersInUse = new Map<string, readonly string[]>();
  /** The image name each task started by this agent runs (a task found again after a restart: unknown). */
  private readonly imageOfTask = new Map<string, string>();
  private gcTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly docker: DockerOptions) {
    super(docker);
    this.store = new ImageStore(docker.imageDir);
    this.puller = new ImagePuller(this.store);
  }

  fingerprint(): Fingerprint {
    if (!this.docker.support.available) return { detected: true, healthy: false, description: this.docker.support.reason, attributes: {} };
    return { detected: true, healthy: true, description: "healthy", attributes: { "driver.docker": "1" } };
  }

  /** The user is the image's, resolved in its files, not the host's. */
  protected override launchUser(): undefined {
    return undefined;
  }

  protected async isolation(config: ParsedTaskConfig, docker: DockerConfig, events: DriverEvents): Promise<IsolationSpecInput> {
    if (!config.allocDir) throw new Error("the docker driver needs the task config's allocDir");
    // Checked before the image is pulled: a refused key costs no download.
    const network = networkOf(config, docker.network_mode);
    const security = containerSecurity(docker, this.docker.plugin, network.network === "none" || network.netns !== undefined);
    const image = await this.image(config, docker, events);
    const layers = image.layers.map((layer) => this.store.layerDir(layer));
    const imageConfig = readImageConfig(this.store, image.config);
    const run = imageRun(imageConfig, layers, {
      entrypoint: docker.entrypoint,
      command: config.command,
      args: config.args,
      workDir: docker.work_dir,
      user: config.user,
      env: config.env,
    });
    // A fresh upper dir each start: a restarted container starts from its image, as in Nomad.
    const rootfs = join(config.cwd, ROOTFS_DIR);
    rmSync(rootfs, { recursive: true, force: true });
    for (const dir of ["upper", "work"]) mkdirSync(join(rootfs, dir), { recursive: true, mode: 0o755 });
    giveSecretsTo(join(config.cwd, "secrets"), run.user);
    const volumes = [...config.volumes, ...this.volumes(config, docker.volumes ?? [])];
    const id = taskIdOf(config.allocId, config.taskName);
    this.layersInUse.set(id, image.layers);
    this.imageOfTask.set(id, image.name);
    const stopSignal = imageConfig.config?.StopSignal;
    if (stopSignal) this.stopSignals.set(id, stopSignal);
    else this.stopSignals.delete(id);
    this.store.saveImage({ ...image, lastUsed: Date.now() });
    return {
      ...security,
      argv: withInit(run.argv, security),
      env: run.env,
      cwd: run.cwd,
      user: run.user,
      taskDir: config.cwd,
      allocDir: config.allocDir,
      chrootEnv: {},
      ...isolatedNetwork(config, docker),
      devices: config.devices,
      mounts: config.mounts,
      volumes,
      image: { layers, upperDir: join(rootfs, "upper"), workDir: join(rootfs, "work") },
    };
  }

  /** The image, from the store, a `docker save` tarball (load), or its registry. */
  private async image(config: ParsedTaskConfig, docker: DockerConfig, events: DriverEvents): Promise<StoredImage> {
    const ref = parseReference(docker.image, "config.image");
    if (docker.load) {
      const local = join(config.cwd, "local");
      const tarball = resolve(local, docker.load);
      if (relative(local, tarball).startsWith("..")) throw new ValidationError("config", [`load: "${docker.load}" is outside the task's local/ dir`]);
      if (!this.store.findImage(ref.name)) events(`Loading image from ${docker.load}`);
      return loadImage(this.store, tarball, ref.name);
    }
    const credentials = credentialsFor(ref.registry, docker.auth, this.docker.plugin.authConfig);
    return this.puller.pull(docker.image, {
      insecureRegistries: this.docker.plugin.insecureRegistries,
      credentials,
      certsDir: this.docker.plugin.certsDir,
      timeoutMs: parseDuration(docker.image_pull_timeout),
      forcePull: docker.force_pull,
      progress: events,
    });
  }

  /** `volumes = ["host:/container[:ro]"]`: host paths relative to the task dir, within the alloc dir. */
  private volumes(config: ParsedTaskConfig, specs: readonly string[]): VolumeBind[] {
    const allocRoot = dirname(config.allocDir!);
    return specs.map((spec) => {
      const [host, inside, mode] = spec.split(":") as [string, string, string | undefined];
      const hostPath = resolve(config.cwd, host);
      if (relative(allocRoot, hostPath).startsWith("..") || hostPath === allocRoot) {
        throw new ValidationError("config", [`volumes: "${host}" is outside the alloc dir (only paths within it can be mounted)`]);
      }
      requireNoSymlinks(allocRoot, hostPath, host);
      mkdirSync(hostPath, { recursive: true, mode: 0o755 });
      return { hostPath, taskPath: posix.normalize(inside).replace(/(.)\/$/, "$1"), readOnly: mode === "ro" };
    });
  }

  override async startTask(config: TaskConfig, events?: DriverEvents): Promise<{ handle: TaskHandle }> {
    const id = taskIdOf(config.allocId, config.taskName);
    try {
      return await super.startTask(config, events);
    } catch (err) {
      // A start that failed after its image was chosen holds no image.
      this.layersInUse.delete(id);
      this.imageOfTask.delete(id);
      throw err;
    } finally {
      this.stopSignals.delete(id);
    }
  }

  /** The job's kill_signal, else the image's StopSignal (as Docker stops it), else Nomad's default. */
  protected override killSignalOf(config: ParsedTaskConfig): string {
    const stopSignal = this.stopSignals.get(taskIdOf(config.allocId, config.taskName));
    return config.killSignal ?? (stopSignal && isSignal(stopSignal) ? signalName(signalNumber(stopSignal)) : super.killSignalOf(config));
  }

  override async recoverTask(handle: TaskHandle): Promise<void> {
    await super.recoverTask(handle);
    const layers = this.specLayers(handle);
    if (layers) this.layersInUse.set(taskIdOf(handle.allocId, handle.taskName), layers);
  }

  /** The layer digests in a running task's isolation spec (written by its executor). */
  private specLayers(handle: TaskHandle): string[] | null {
    try {
      const spec = JSON.parse(readFileSync(executorFiles(handle.executor.exitFile.replace(/\.exit\.json$/, "")).spec, "utf8")) as { image?: { layers?: string[] } };
      return (spec.image?.layers ?? []).map((dir) => `sha256:${basename(dir)}`);
    } catch {
      return null;
    }
  }

  override async destroyTask(taskId: string, force: boolean): Promise<void> {
    await super.destroyTask(taskId, force);
    const layers = this.layersInUse.get(taskId);
    const name = this.imageOfTask.get(taskId);
    this.layersInUse.delete(taskId);
    this.imageOfTask.delete(taskId);
    if (!layers) return;
    // The task's own image when known; a recovered task names only its layers, so every image of them.
    const candidates = name === undefined ? this.store.listImages() : [this.store.findImage(name)].filter((image) => image !== null);
    for (const image of candidates) {
      if (image.layers.join() === layers.join()) this.store.saveImage({ ...image, lastUsed: Date.now() });
    }
    if (this.docker.plugin.gc.image) this.scheduleGc();
  }

  private scheduleGc(): void {
    if (this.gcTimer) clearTimeout(this.gcTimer);
    this.gcTimer = setTimeout(() => {
      this.gcTimer = undefined;
      try {
        this.collectImages();
      } catch (err) {
        this.log(`image gc: ${(err as Error).message}`);
      }
    }, this.docker.plugin.gc.imageDelayMs);
    this.gcTimer.unref?.();
  }

  /**
   * Removes images no task uses whose last use is image_delay ago or more,
   * then every layer and blob no remaining image names. Returns the images removed.
   */
  collectImages(now = Date.now()): string[] {
    const inUse = new Set([...this.layersInUse.values()].flat());
    const removed: string[] = [];
    for (const image of this.store.listImages()) {
      const used = image.layers.every((layer) => inUse.has(layer));
      if (used || now - image.lastUsed < this.docker.plugin.gc.imageDelayMs) continue;
      this.store.removeImage(image.name);
      removed.push(image.name);
      this.log(`image gc: removed ${image.name}`);
    }
    this.store.sweep(inUse);
    return removed;
  }

  override detachAll(): void {
    if (this.gcTimer) clearTimeout(this.gcTimer);
    super.detachAll();
  }
}
