/**
 * Loop mounts and detaches off the agent's thread. That one JS thread also
 * serves the API, schedules and runs allocs, and at a few dozen alloc starts
 * a second mount(2), LOOP_CONFIGURE and umount2(2) held it a quarter of the
 * time (an umount2 of an ext4 image takes up to 25 ms). A Worker (the same on
 * Bun and Deno; runtime/mount-worker.ts) makes the calls one after another
 * and answers each by message.
 *
 * A Worker that cannot start, or dies, leaves its calls (those waiting
 * included) to this thread, as before: slower, never lost; the agent warns
 * of it (probeMountThread), naming the script.
 */
import { setTimeout as setTimer } from "node:timers";
import { readFileSync } from "node:fs";
import { parseMountinfo, pointsUnder } from "../lib/procfs.ts";
import { isCompiled } from "./detect.ts";
import { type MountCall, type MountReply, type MountRequest, runMountCall } from "./mount-calls.ts";
import type { Detached } from "./mounts.ts";

/**
 * The Worker's script: beside this module in the source; in the compiled
 * binary an entry point of its own, kept under its path from the build's root
 * (build.ts builds MOUNT_WORKER_ENTRY), while this module sits in a chunk at that root.
 */
export const MOUNT_WORKER_ENTRY = "./src/runtime/mount-worker.ts";
export const MOUNT_WORKER = isCompiled ? `/$bunfs/root/${MOUNT_WORKER_ENTRY.slice(2).replace(/\.ts$/, ".js")}` : new URL("./mount-worker.ts", import.meta.url).href;
/** An idle mount thread is ended after this long, so it never keeps a process alive by itself. */
const MOUNT_THREAD_IDLE_MS = 5_000;

/** Why the mount thread is not used: its script and the runtime's error. */
export interface MountThreadFailure {
  script: string;
  reason: string;
}

export class MountThread {
  private worker: Worker | null = null;
  private failure: MountThreadFailure | null = null;
  /** Told once, when the thread fails (the agent's warning). */
  private onFailure: (failure: MountThreadFailure) => void = () => {};
  private nextId = 0;
  private readonly waiting = new Map<number, { request: MountRequest; resolve: (reply: MountReply) => void }>();
  private idle: ReturnType<typeof setTimer> | undefined;

  /** `script`: the Worker's entry, MOUNT_WORKER but in tests. */
  constructor(private readonly script = MOUNT_WORKER) {}

  /**
   * One call that needs nothing done, made on the thread (which then idles
   * out again), so the agent can say at start where its mount calls run:
   * true when the thread answered it. `onFailure` hears of the thread's
   * failure, now or later.
   */
  async probe(onFailure: (failure: MountThreadFailure) => void): Promise<boolean> {
    this.onFailure = onFailure;
    if (this.failure) onFailure(this.failure);
    await this.call({ op: "detach", points: [] });
    return this.failure === null;
  }

  call(call: MountCall): Promise<MountReply> {
    const request: MountRequest = { ...call, id: this.nextId++ };
    const worker = this.started();
    if (!worker) return Promise.resolve(runMountCall(request));
    clearTimeout(this.idle);
    return new Promise((resolve) => {
      this.waiting.set(request.id, { request, resolve });
      worker.postMessage(request);
    });
  }

  private started(): Worker | null {
    if (this.worker || this.failure) return this.worker;
    try {
      const worker = new Worker(this.script, { type: "module" });
      (worker as Worker & { unref?(): void }).unref?.();
      worker.onmessage = (event: MessageEvent<MountReply>) => this.answered(event.data);
      worker.onerror = (event) => {
        event.preventDefault();
        this.fail(event.message);
      };
      // A thread that ends without an error (process.exit in it, the runtime ending it) says
      // only this; unheard, its calls would wait for ever. Its own stop() has let go of it first.
      // Bun sends it; Deno 2 sends nothing when a Worker exits (measured), so there such an end is not seen.
      worker.addEventListener("close", (event) => {
        if (this.worker === worker) this.fail(`the mount thread exited${exitCode(event)}`);
      });
      this.worker = worker;
    } catch (err) {
      this.fail(err instanceof Error ? err.message : String(err));
    }
    return this.worker;
  }

  private answered(reply: MountReply): void {
    this.waiting.get(reply.id)?.resolve(reply);
    this.waiting.delete(reply.id);
    if (this.waiting.size === 0) this.idle = setTimer(() => this.stop(), MOUNT_THREAD_IDLE_MS).unref();
  }

  /** The thread is gone: what it was asked and did not answer is done here. */
  private fail(reason: string): void {
    this.failure = { script: this.script, reason };
    this.onFailure(this.failure);
    this.stop();
    for (const { request, resolve } of this.waiting.values()) resolve(runMountCall(request));
    this.waiting.clear();
  }

  private stop(): void {
    const worker = this.worker;
    this.worker = null;
    worker?.terminate();
  }
}

/** ", code N" where the runtime's close event carries the thread's exit code (Bun's does). */
function exitCode(event: object): string {
  const code = (event as { code?: unknown }).code;
  return typeof code === "number" ? ` (code ${code})` : "";
}

const thread = new MountThread();

/** MountThread.probe of the agent's mount thread. */
export const probeMountThread = (onFailure: (failure: MountThreadFailure) => void): Promise<boolean> => thread.probe(onFailure);

/** runtime/mounts.ts mountLoopImage, on the mount thread; throws its error. */
export async function mountLoopImageOffThread(image: string, target: string, fsType: string, flags: number): Promise<void> {
  const reply = await thread.call({ op: "mountLoop", image, target, fsType, flags });
  if (reply.error) throw new Error(reply.error);
}

let sharedRead: Promise<string[]> | null = null;

/**
 * Every mount point of this namespace, read once for all who ask within one
 * turn of the event loop, and always after they asked. With a thousand tasks
 * there are a thousand secrets mounts, and reading the table takes over a
 * millisecond: a thousand allocs removed together share a few reads instead
 * of each making its own.
 */
function mountPoints(): Promise<string[]> {
  sharedRead ??= new Promise((resolve, reject) =>
    setImmediate(() => {
      sharedRead = null;
      try {
        resolve(parseMountinfo(readFileSync("/proc/self/mountinfo", "utf8")).map((mount) => mount.mountPoint));
      } catch (err) {
        reject(err);
      }
    }),
  );
  return sharedRead;
}

/** mounts.ts detachMountsUnder on the mount thread, reading the mount table with others who ask at the same time. */
export async function detachMountsBelow(path: string): Promise<Detached> {
  const points = pointsUnder(await mountPoints(), path);
  const reply = await thread.call({ op: "detach", points });
  return { detached: reply.detached ?? [], failed: reply.failed ?? [] };
}

