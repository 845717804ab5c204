/**
 * The client: this node's side of Nomad. It runs the allocations the server
 * places here and reports how they do.
 *
 *   start ──> log pump up ──> devices fingerprinted ──> restore alloc runners from the state DB
 *         (reattach to live tasks) ──> register the node ──> watch loop
 *               │ the servers cannot be reached (remote servers only): start anyway, tasks
 *               └─ keep running; register again every REGISTER_RETRY_MS.. (doubling) until it
 *                  succeeds, and only then watch: an unregistered node's empty alloc list must
 *                  not be read as "stop everything"
 *   devices change ──> register the node again (waiting placements are retried)
 *   every DRIVER_CHECK_MS: a driver whose health changed ──> node registered again + node event
 *
 *   watch loop: watchAllocs(node, index) blocks until the server changes something, then
 *     new alloc to run    ──> GC makes room ──> disk check ──> persist ──> alloc runner runs it
 *     new alloc to stop   ──> reported complete (it never ran here)
 *     known alloc         ──> runner.update(newer version)   (stop is an update)
 *     alloc the server no longer has ──> runner.destroy() (directory and state removed)
 *
 *   alloc runners report ──> AllocSync batches ──> server
 *   an alloc that ends   ──> GC keeps it until room is needed
 *
 *   stop ──> watch ends ──> what the server asked for and the watch had not
 *            delivered yet is carried out (allocs it stopped are stopped, those it
 *            forgot destroyed: a SIGTERM just after a purge) ──> pending reports
 *            sent ──> runners let go; tasks keep running
 *            (-dev: every alloc is destroyed first, then the parent cgroup, so a dev agent
 *             leaves nothing behind)
 */
import type { AgentConfig } from "../config/schema.ts";
import { removeDir } from "../cgroups/files.ts";
import { parentCgroupDirs } from "../cgroups/paths.ts";
import type { NodeFingerprint } from "./fingerprint/index.ts";
import type { DriverPlugin, ExecResult, ExecSession, TaskResourceUsage } from "../drivers/driver.ts";
import type { DevicePlugin } from "../devices/plugin.ts";
import type { DeviceGroupStats } from "../structs/device.ts";
import { allocUsage, type AllocResourceUsage } from "../stats/alloc.ts";
import { DeviceManager } from "./devices/manager.ts";
import type { Logger } from "../lib/logger.ts";
import type { PublishTaskUsage } from "../metrics/alloc.ts";
import type { ClientEndpoint } from "../structs/client-endpoint.ts";
import type { ClientState } from "../state/client/db.ts";
import { loadAllAllocs, saveNewAllocs, type StoredAlloc } from "../state/client/allocs.ts";
import { allocTaskGroup, isAllocTerminal, isClientTerminal, type Allocation } from "../structs/alloc.ts";
import type { AllocClientUpdate } from "../structs/api.ts";
import type { NodeRegistration } from "../structs/node.ts";
import { TASK_EVENT } from "../structs/task-state.ts";
import type { AllocDir } from "./allocdir/alloc-dir.ts";
import { DiskImages } from "./allocdir/disk-image.ts";
import { MOUNT_WORKER, probeMountThread } from "../runtime/mount-thread.ts";
import { AllocSync } from "./alloc-sync.ts";
import type { AllocRunner } from "./allocrunner/alloc-runner.ts";
import { AllocGarbageCollector } from "./gc.ts";
import type { LogmonClient } from "./logmon/client.ts";
import type { LogmonSupervisor } from "./logmon/supervisor.ts";
import { makeAllocRunner, newAllocState, type RunnerFactoryDeps } from "./runner-factory.ts";
import { diskUsage } from "../stats/disk.ts";
import { StatsCollector } from "./stats-collector.ts";
import type { ServeTaskApi } from "./taskrunner/hooks/task-api.ts";
import type { SignIdentity } from "./taskrunner/hooks/identity.ts";
import type { TemplateVariables } from "./taskrunner/hooks/template.ts";
import type { DriverHealth } from "./taskrunner/hooks/validate.ts";
import { newTaskState, taskEvent } from "./taskrunner/task-state.ts";
import type { TaskRunner } from "./taskrunner/task-runner.ts";
import { BYTES_PER_MIB } from "../lib/units.ts";
import { nowNanos } from "../structs/common.ts";

/**
 * Allocs stored and launched between two turns of the event loop when many
 * arrive at once: each creates its directories right away (nine mkdirs,
 * about 1.5 ms on the bench machine's disk), so a slice holds the loop for
 * tens of ms, where a thousand in one go held the API for seconds.
 */
export const LAUNCH_SLICE = 16;

/** Pause after the server's watch failed, before asking again. */
export const WATCH_RETRY_MS = 1_000;
/** First pause after a failed registration; doubled up to REGISTER_RETRY_MAX_MS (Nomad's client retries every 15 s). */
export const REGISTER_RETRY_MS = 1_000;
export const REGISTER_RETRY_MAX_MS = 15_000;
/**
 * At stop, how long one last look at the server's alloc list may take (a
 * remote server that does not answer must not hold the shutdown).
 */
export const SHUTDOWN_LOOK_MS = 2_000;
/**
 * At stop, looks at the server's list at most: one finds the stops and
 * removals the watch had not delivered, one the allocs the server forgot once
 * their stops were reported, one finds nothing left to do.
 */
export const SHUTDOWN_LOOKS = 3;
/** How often drivers' health is checked: Nomad's driver manager fingerprints healthy drivers every 30 s. */
export const DRIVER_CHECK_MS = 30_000;


export interface ClientDeps {
  config: AgentConfig;
  node: NodeFingerprint;
  /** The node record, with the device groups the plugins report now. */
  registration: (devices: DeviceManager) => NodeRegistration;
  allocRoot: string;
  state: ClientState;
  logger: Logger;
  endpoint: ClientEndpoint;
  drivers: ReadonlyMap<string, DriverPlugin>;
  logmonSupervisor: LogmonSupervisor;
  logmon: LogmonClient;
  /** -dev: destroy every alloc when the agent stops. */
  destroyOnStop: boolean;
  publishTaskStats?: PublishTaskUsage;
  devicePlugins: readonly DevicePlugin[];
  /** Called with each new reading of the host's device statistics. */
  publishDeviceStats?: (stats: DeviceGroupStats[]) => void;
  serveTaskApi?: ServeTaskApi;
  signIdentity?: SignIdentity;
  templateVariables?: TemplateVariables;
}

export class Client {
  private readonly runners = new Map<string, AllocRunner>();
  private readonly sync: AllocSync;
  private readonly gc: AllocGarbageCollector;
  private readonly stats: StatsCollector;
  private readonly watchAbort = new AbortController();
  private watching: Promise<void> | undefined;
  private gcTimer: ReturnType<typeof setInterval> | undefined;
  private driverTimer: ReturnType<typeof setInterval> | undefined;
  /** Each driver's health as last registered: "healthy" or its description. */
  private driverStates = new Map<string, string>();
  private readonly terminalWaiters = new Map<string, (() => void)[]>();
  private watchError: string | undefined;
  /** Set once the server has answered a watch: only then is its alloc list this node's (see start). */
  private watchedOnce = false;
  /** What every alloc runner of this client is made from. */
  private readonly factory: RunnerFactoryDeps;
  readonly devices: DeviceManager;

  constructor(private readonly deps: ClientDeps) {
    this.sync = new AllocSync((updates) => deps.endpoint.updateAllocs(updates), deps.logger);
    // Published allocation metrics want every task's figures every interval; otherwise only those read.
    this.stats = new StatsCollector(deps.config.telemetry.collection_interval, deps.logger, deps.publishTaskStats !== undefined);
    this.devices = new DeviceManager(deps.devicePlugins, {
      statsIntervalMs: deps.config.telemetry.collection_interval,
      logger: deps.logger,
      onChange: () => void this.register(),
      ...(deps.publishDeviceStats ? { onStats: deps.publishDeviceStats } : {}),
    });
    this.factory = {
      config: this.deps.config,
      node: this.deps.node,
      allocRoot: this.deps.allocRoot,
      diskImages: deps.config.client.disk_limit === "filesystem" ? new DiskImages(this.deps.allocRoot, this.deps.logger) : undefined,
      state: this.deps.state,
      logger: this.deps.logger,
      drivers: this.deps.drivers,
      driverHealth: (name: string) => this.driverHealth(name),
      logmon: this.deps.logmon,
      previous: { waitTerminal: (id: string) => this.waitTerminal(id) },
      report: (update: AllocClientUpdate) => this.sync.queue(update),
      stats: this.stats,
      publishTaskStats: this.deps.publishTaskStats,
      devices: this.devices,
      services: this.deps.endpoint,
      serveTaskApi: this.deps.serveTaskApi,
      ...(this.deps.signIdentity ? { signIdentity: this.deps.signIdentity } : {}),
      ...(this.deps.templateVariables ? { templateVariables: this.deps.templateVariables } : {}),
    };
    this.gc = new AllocGarbageCollector(
      {
        maxAllocs: deps.config.client.gc_max_allocs,
        diskUsageThreshold: deps.config.client.gc_disk_usage_threshold,
        inodeUsageThreshold: deps.config.client.gc_inode_usage_threshold,
      },
      () => {
        const usage = diskUsage(deps.allocRoot);
        return { diskUsedPercent: usage.UsedPercent, inodesUsedPercent: usage.InodesUsedPercent, availableBytes: usage.Available };
      },
      (allocId, reason) => deps.logger.info({ alloc_id: allocId, reason }, "garbage collecting alloc"),
    );
  }

  get nodeId(): string {
    return this.deps.node.id;
  }

  allocRunner(id: string): AllocRunner | undefined {
    return this.runners.get(id);
  }

  get allocRunners(): AllocRunner[] {
    return [...this.runners.values()];
  }

  /** For /v1/agent/health: unhealthy while the server cannot be watched. */
  health(): { ok: boolean; message: string } {
    return this.watchError === undefined ? { ok: true, message: "ok" } : { ok: false, message: `watching the server's allocs failed: ${this.watchError}` };
  }

  /** A task's figures, no older than one collection interval, if it runs. */
  taskStats(taskId: string): Promise<TaskResourceUsage | undefined> {
    return this.stats.read(taskId);
  }

  /**
   * An alloc's usage (GET /v1/client/allocation/:id/stats): each running
   * task's latest sample with the latest statistics of its own device
   * instances, and the sum, whose DeviceStats lists every task's groups one
   * after another, as Nomad's does.
   */
  async allocStats(allocId: string): Promise<AllocResourceUsage> {
    const runner = this.mustRunner(allocId);
    const tasks: Record<string, TaskResourceUsage> = {};
    const samples = await Promise.all(runner.tasks.map((task) => this.taskStats(task.taskId)));
    for (const [i, task] of runner.tasks.entries()) {
      const sample = samples[i];
      if (!sample) continue;
      const devices = this.devices.statsFor(runner.current.AllocatedResources.Tasks[task.name]?.Devices ?? []);
      tasks[task.name] = devices ? { ...sample, ResourceUsage: { ...sample.ResourceUsage, DeviceStats: devices } } : sample;
    }
    return allocUsage(tasks);
  }

  driverHealth(name: string): DriverHealth | undefined {
    const driver = this.deps.drivers.get(name);
    if (!driver) return undefined;
    const fingerprint = driver.fingerprint();
    return { healthy: fingerprint.detected && fingerprint.healthy, description: fingerprint.description };
  }

  async start(): Promise<void> {
    // Said once at start, so an operator sees a binary that lost the mount thread's script.
    const mountThread = probeMountThread((failure) => this.deps.logger.warn(failure, "the mount thread failed: mount calls run on the agent's thread"));
    await this.deps.logmonSupervisor.start();
    // Before the restore: a restored task that restarts at once asks its device plugin for its instances.
    await this.devices.start();
    await this.restore();
    this.driverStates = this.currentDriverStates();
    const registered = await this.register();
    // Until registered, /v1/agent/health says why.
    if (!registered) this.watchError = "registering the node failed; retrying";
    this.watching = (registered ? Promise.resolve(true) : this.registerUntilDone()).then((ok) => (ok ? this.watchLoop() : undefined));
    this.gcTimer = setInterval(() => void this.gc.keepUsageBelowThreshold(), this.deps.config.client.gc_interval);
    this.driverTimer = setInterval(() => void this.checkDrivers(), DRIVER_CHECK_MS);
    if (await mountThread) this.deps.logger.info({ script: MOUNT_WORKER }, "mount calls run on a worker thread");
  }

  /**
   * Registers the node with what it has now (at start, and when devices
   * appear or go); false when the servers could not take it.
   */
  private async register(): Promise<boolean> {
    try {
      await this.deps.endpoint.registerNode(this.deps.registration(this.devices));
      return true;
    } catch (err) {
      this.deps.logger.warn({ err: String(err) }, "registering the node failed");
      return false;
    }
  }

  private async registerUntilDone(): Promise<boolean> {
    const signal = this.watchAbort.signal;
    for (let delay = REGISTER_RETRY_MS; !signal.aborted; delay = Math.min(delay * 2, REGISTER_RETRY_MAX_MS)) {
      const aborted = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), delay);
        signal.addEventListener("abort", () => (clearTimeout(timer), resolve(true)), { once: true });
      });
      if (aborted) return false;
      if (await this.register()) return true;
    }
    return false;
  }

  private currentDriverStates(): Map<string, string> {
    return new Map(
      [...this.deps.drivers.keys()].map((name) => {
        const health = this.driverHealth(name);
        return [name, health?.healthy ? "healthy" : (health?.description ?? "unhealthy")];
      }),
    );
  }

  /** A driver that became healthy or unhealthy: the servers get the new node record and an event saying so. */
  private async checkDrivers(): Promise<void> {
    const now = this.currentDriverStates();
    const changed = [...now].filter(([name, state]) => this.driverStates.get(name) !== state);
    if (changed.length === 0) return;
    this.driverStates = now;
    const events = changed.map(([name, state]) => ({
      Message: state === "healthy" ? `Driver ${name} is healthy` : `Driver ${name} is unhealthy: ${state}`,
      Subsystem: "Driver",
      Details: { driver: name },
      Time: nowNanos(),
    }));
    for (const event of events) this.deps.logger.info({ driver: event.Details.driver }, event.Message);
    try {
      await this.deps.endpoint.registerNode(this.deps.registration(this.devices));
      await this.deps.endpoint.emitNodeEvents(this.nodeId, events);
    } catch (err) {
      // The next check (or registration) sends the node again.
      this.driverStates = new Map();
      this.deps.logger.warn({ err: String(err) }, "reporting a driver health change failed");
    }
  }

  async stop(): Promise<void> {
    this.watchAbort.abort(new Error("client stopping"));
    clearInterval(this.gcTimer);
    clearInterval(this.driverTimer);
    await this.watching;
    if (!this.deps.destroyOnStop) await this.catchUpBeforeStop();
    await this.devices.stop();
    if (this.deps.destroyOnStop) {
      await Promise.all(this.allocRunners.map((runner) => runner.destroy()));
      this.runners.clear();
      this.removeCgroupParent();
    }
    await this.sync.stop();
    for (const runner of this.runners.values()) await runner.shutdown();
    this.stats.stop();
    if (this.deps.destroyOnStop) {
      await this.deps.logmonSupervisor.terminate();
      await Promise.all([...this.deps.drivers.values()].map((driver) => driver.endSharedHelpers?.()));
    } else await this.deps.logmonSupervisor.stop();
  }

  /** The parent cgroup goes too, unless another agent's tasks still use it (the kernel refuses then). */
  private removeCgroupParent(): void {
    for (const dir of parentCgroupDirs(this.deps.node.cgroups, this.deps.config.client.cgroup_parent)) {
      try {
        removeDir(dir);
      } catch (err) {
        this.deps.logger.info({ dir, reason: (err as Error).message }, "cgroup parent kept");
      }
    }
  }

  /** Operator restart of one task, or every task of the alloc when `task` is empty. */
  async restartAlloc(allocId: string, task: string): Promise<void> {
    const runner = this.mustRunner(allocId);
    const targets = task ? [this.mustTask(runner, task)] : runner.tasks.filter((t) => t.isRunning);
    await Promise.all(targets.map((t) => t.restart("User requested restart")));
  }

  async signalAlloc(allocId: string, task: string, signal: string): Promise<void> {
    const runner = this.mustRunner(allocId);
    const targets = task ? [this.mustTask(runner, task)] : runner.tasks.filter((t) => t.isRunning);
    await Promise.all(targets.map((t) => t.signal(signal, "User requested signal")));
  }

  /** Runs a command in a task of the alloc (its only task when `task` is empty). */
  async execInAlloc(allocId: string, task: string, argv: readonly string[], timeoutMs: number): Promise<ExecResult> {
    return this.execTarget(allocId, task).exec(argv, timeoutMs);
  }

  /** Starts an interactive session in a task of the alloc (its only task when `task` is empty). */
  async execStreamInAlloc(allocId: string, task: string, argv: readonly string[], tty: boolean): Promise<ExecSession> {
    return this.execTarget(allocId, task).execStream(argv, tty);
  }

  /** The task an exec into the alloc runs in: the one named, or the alloc's only task. */
  execTarget(allocId: string, task: string): TaskRunner {
    const runner = this.mustRunner(allocId);
    const target = task ? this.mustTask(runner, task) : runner.tasks.length === 1 ? runner.tasks[0]! : undefined;
    if (!target) throw new TaskChoiceError(`allocation ${allocId} has ${runner.tasks.length} tasks; name one: ${runner.tasks.map((t) => t.name).join(", ")}`);
    return target;
  }

  /**
   * Operator GC of one finished alloc (PUT /v1/client/allocation/:id/gc):
   * its dir goes now instead of when room is needed. A running alloc is
   * refused (stop it first).
   */
  async collectAlloc(allocId: string): Promise<void> {
    const runner = this.mustRunner(allocId);
    if (!runner.isTerminal) throw new AllocStillRunningError(`allocation ${allocId} is still running; stop it before collecting it`);
    await this.gc.collect(allocId, "requested by an operator");
  }

  /** Operator GC of every finished alloc (PUT /v1/client/gc). */
  collectAllAllocs(): Promise<number> {
    return this.gc.collectAll();
  }

  private mustRunner(allocId: string): AllocRunner {
    const runner = this.runners.get(allocId);
    if (!runner) throw new UnknownAllocError(allocId);
    return runner;
  }

  private mustTask(runner: AllocRunner, task: string) {
    const taskRunner = runner.task(task);
    if (!taskRunner) throw new UnknownAllocError(`${runner.id} with a task "${task}"`);
    return taskRunner;
  }



  /**
   * Every stored alloc's runner, reattached to what still runs. The node's
   * state is read at once, and the runners reattach side by side (executors
   * answer for all their tasks at once); only then does any of them run on.
   */
  private async restore(): Promise<void> {
    const runners = loadAllAllocs(this.deps.state).map(({ alloc, ...stored }) => {
      const runner = makeAllocRunner(this.factory, alloc, stored);
      this.runners.set(alloc.ID, runner);
      return runner;
    });
    await Promise.all(
      runners.map((runner) =>
        runner.restore().catch((err: unknown) => this.deps.logger.error({ err, alloc_id: runner.id }, "restoring alloc failed")),
      ),
    );
    for (const runner of runners) this.launch(runner);
    if (this.runners.size > 0) this.deps.logger.info({ allocs: this.runners.size }, "restored allocs");
  }

  private launch(runner: AllocRunner): void {
    void runner.run().then(() => {
      for (const wake of this.terminalWaiters.get(runner.id) ?? []) wake();
      this.terminalWaiters.delete(runner.id);
      if (this.runners.get(runner.id) === runner) this.gc.mark(runner.id, () => this.destroyAlloc(runner.id));
    });
  }

  private waitTerminal(allocId: string): Promise<AllocDir | null> {
    const runner = this.runners.get(allocId);
    if (!runner) return Promise.resolve(null);
    if (runner.isTerminal) return Promise.resolve(runner.allocDir);
    return new Promise((resolve) => {
      const waiters = this.terminalWaiters.get(allocId) ?? [];
      waiters.push(() => resolve(this.runners.get(allocId)?.allocDir ?? null));
      this.terminalWaiters.set(allocId, waiters);
    });
  }

  private async destroyAlloc(allocId: string): Promise<void> {
    const runner = this.runners.get(allocId);
    if (!runner) return;
    this.gc.unmark(allocId);
    await runner.destroy();
    this.runners.delete(allocId);
    // One destroyed while it was still pending would otherwise hold every later batch as if starting.
    this.sync.forget(allocId);
  }

  private async watchLoop(): Promise<void> {
    let index = 0;
    const signal = this.watchAbort.signal;
    while (!signal.aborted) {
      try {
        const { index: next, allocs, stillKept } = await this.deps.endpoint.watchAllocs(this.nodeId, index, signal);
        this.watchError = undefined;
        this.watchedOnce = true;
        await this.reconcile(allocs, stillKept);
        index = next;
      } catch (err) {
        if (signal.aborted) return;
        this.watchError = String(err);
        this.deps.logger.warn({ err: String(err) }, "watching allocs failed; retrying");
        await new Promise((resolve) => setTimeout(resolve, WATCH_RETRY_MS));
      }
    }
  }

  /**
   * The server's word that the stopped watch had not delivered (a SIGTERM a
   * few ms after `job stop -purge`): without this, the purged allocs' tasks,
   * dirs and secrets mounts would wait for the next agent. Non-blocking
   * looks at the server's list: allocs it stopped are stopped and reported,
   * allocs it no longer has destroyed, until a look finds nothing to do.
   * Nothing new starts.
   */
  private async catchUpBeforeStop(): Promise<void> {
    if (!this.watchedOnce) return;
    for (let look = 0; look < SHUTDOWN_LOOKS; look++) {
      let allocs: readonly Allocation[];
      let stillKept: ((allocId: string) => boolean) | undefined;
      try {
        ({ allocs, stillKept } = await this.deps.endpoint.watchAllocs(this.nodeId, 0, AbortSignal.timeout(SHUTDOWN_LOOK_MS)));
      } catch (err) {
        this.deps.logger.warn({ err: String(err) }, "the server's alloc list could not be read before stopping; the next agent start catches up");
        return;
      }
      const current = new Map(allocs.map((alloc) => [alloc.ID, alloc]));
      const forgotten = [...this.runners.keys()].filter((id) => !current.has(id) && !stillKept?.(id));
      const stopped = this.allocRunners.filter((runner) => !runner.isTerminal && current.has(runner.id) && isAllocTerminal(current.get(runner.id)!));
      if (forgotten.length === 0 && stopped.length === 0) return;
      for (const runner of stopped) void runner.update(current.get(runner.id)!);
      await Promise.all([...forgotten.map((id) => this.destroyAlloc(id)), ...stopped.map((runner) => this.waitTerminal(runner.id))]);
      await this.sync.flush();
    }
  }

  /** `stillKept`: allocs the server has but left out of `allocs` (NodeAllocs); their runners stay. */
  private async reconcile(allocs: readonly Allocation[], stillKept?: (allocId: string) => boolean): Promise<void> {
    const seen = new Set<string>();
    const toRun: Allocation[] = [];
    for (const alloc of allocs) {
      seen.add(alloc.ID);
      const runner = this.runners.get(alloc.ID);
      if (runner) {
        void runner.update(alloc);
        continue;
      }
      if (!isAllocTerminal(alloc)) toRun.push(alloc);
      else if (!isClientTerminal(alloc.ClientStatus)) {
        // Told to stop before this node ever started it: nothing to do but say so.
        this.sync.queue({ ID: alloc.ID, ClientStatus: "complete", ClientDescription: "stopped before it started" });
      }
    }
    // Side by side: a purged thousand-alloc job is a thousand stops and removals at once.
    await Promise.all([...this.runners.keys()].filter((id) => !seen.has(id) && !stillKept?.(id)).map((id) => this.destroyAlloc(id)));
    if (toRun.length === 0) return;

    const live = this.allocRunners.filter((r) => !r.isTerminal).length;
    const diskMb = toRun.reduce((sum, alloc) => sum + alloc.AllocatedResources.Shared.DiskMB, 0);
    await this.gc.makeRoomFor(toRun.length, live, diskMb);
    await this.addAllocs(toRun);
  }

  /**
   * Records the allocs new to this node with their tasks' first states, then
   * runs them, LAUNCH_SLICE at a time: each slice is stored in one
   * transaction before any of it runs, then launched, then the event loop
   * (and the API) gets a turn. One the node cannot take (its disk is too
   * full) fails at once; if the state DB refuses a slice, each of its allocs
   * is tried on its own.
   */
  private async addAllocs(allocs: readonly Allocation[]): Promise<void> {
    const available = diskUsage(this.deps.allocRoot).Available;
    const entries: StoredAlloc[] = [];
    for (const alloc of allocs) {
      const wanted = alloc.AllocatedResources.Shared.DiskMB * BYTES_PER_MIB;
      if (available < wanted) {
        this.refuseAlloc(
          alloc,
          `not enough disk in ${this.deps.allocRoot}: the alloc asks for ${alloc.AllocatedResources.Shared.DiskMB} MB, ${Math.floor(available / BYTES_PER_MIB)} MB are free`,
        );
      } else entries.push({ alloc, ...newAllocState(alloc) });
    }
    this.sync.willStart(entries.map((entry) => entry.alloc.ID));
    for (let first = 0; first < entries.length; first += LAUNCH_SLICE) {
      if (first > 0) await new Promise((resolve) => setImmediate(resolve));
      for (const { alloc, ...stored } of this.saveSlice(entries.slice(first, first + LAUNCH_SLICE))) {
        const runner = makeAllocRunner(this.factory, alloc, stored);
        this.runners.set(alloc.ID, runner);
        this.launch(runner);
      }
    }
  }

  /** Stores new allocs in one transaction, or one by one when that fails; the ones stored. */
  private saveSlice(slice: StoredAlloc[]): StoredAlloc[] {
    try {
      saveNewAllocs(this.deps.state, slice);
      return slice;
    } catch {
      return slice.filter((entry) => {
        try {
          saveNewAllocs(this.deps.state, [entry]);
          return true;
        } catch (err) {
          this.refuseAlloc(entry.alloc, err instanceof Error ? err.message : String(err));
          return false;
        }
      });
    }
  }

  /** The node cannot take the alloc (full disk, state DB unwritable): it fails at once; running allocs are untouched. */
  private refuseAlloc(alloc: Allocation, reason: string): void {
    this.deps.logger.error({ alloc_id: alloc.ID, reason }, "refusing alloc");
    const group = allocTaskGroup(alloc);
    const event = taskEvent(TASK_EVENT.SetupFailure, { SetupError: reason, FailsTask: true });
    const states = Object.fromEntries(
      (group?.Tasks ?? []).map((task) => [task.Name, { ...newTaskState(), State: "dead" as const, Failed: true, Events: [event] }]),
    );
    this.sync.queue({ ID: alloc.ID, ClientStatus: "failed", ClientDescription: reason, TaskStates: states });
  }
}

/** An operator asked to collect an alloc that still runs. */
export class AllocStillRunningError extends Error {
  override name = "AllocStillRunningError";
}

/** The request must name one of the alloc's tasks. */
export class TaskChoiceError extends Error {
  override name = "TaskChoiceError";
}

export class UnknownAllocError extends Error {
  override name = "UnknownAllocError";
  constructor(what: string) {
    super(`allocation ${what} is not on this node`);
  }
}
