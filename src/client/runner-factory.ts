/**
 * Assembles an alloc runner for an allocation: its directory, its hooks, and
 * for each task a task runner with the task hooks, the driver, the store and
 * the environment inputs. The client decides when; this file decides what a
 * runner is made of.
 *
 *   alloc hooks: alloc_dir, previous_alloc, disk_limit, alloc_health_watcher, network
 *   task hooks:  validate, task_dir, task_api, identity, devices, volumes, artifacts,
 *                dispatch_payload, template, logmon, services, stats   (in this order)
 *   The hooks that keep nothing per alloc or task (alloc_dir, previous_alloc, network;
 *   validate, task_dir, devices, volumes, artifacts, dispatch_payload) are one object
 *   for every runner; the template hook is left out of a task without templates.
 */
import type { AgentConfig } from "../config/schema.ts";
import type { NodeFingerprint } from "./fingerprint/index.ts";
import { taskIdOf, type DriverPlugin, type TaskResourceUsage } from "../drivers/driver.ts";
import type { PublishTaskUsage } from "../metrics/alloc.ts";
import type { Logger } from "../lib/logger.ts";
import type { ClientState } from "../state/client/db.ts";
import { allocStore, taskStore, type StoredAlloc, type StoredTask } from "../state/client/allocs.ts";
import { allocIndex, allocTaskGroup, type Allocation } from "../structs/alloc.ts";
import type { AllocClientUpdate } from "../structs/api.ts";
import type { Task } from "../structs/job.ts";
import { TASK_EVENT, type TaskState } from "../structs/task-state.ts";
import { newTaskState, taskEvent } from "./taskrunner/task-state.ts";
import { AllocDir } from "./allocdir/alloc-dir.ts";
import { AllocRunner } from "./allocrunner/alloc-runner.ts";
import { allocDirHook } from "./allocrunner/hooks/alloc-dir.ts";
import type { DiskImages } from "./allocdir/disk-image.ts";
import { previousAllocHook, type PreviousAllocs } from "./allocrunner/hooks/previous-alloc.ts";
import { diskLimitHook } from "./allocrunner/hooks/disk-limit.ts";
import { healthHook } from "./allocrunner/hooks/health.ts";
import { networkHook } from "./allocrunner/hooks/network.ts";
import { BridgeNetwork, savedAddress } from "./network/bridge.ts";
import { bridgeUnavailable } from "./network/support.ts";
import { CheckStatuses } from "./allocrunner/check-statuses.ts";
import type { LogmonClient } from "./logmon/client.ts";
import { fifoPath } from "../log-layout/layout.ts";
import type { TaskEnvInput } from "./taskenv/builder.ts";
import { DEFAULT_HOST_ENV_DENYLIST, filterHostEnv } from "./taskenv/builder.ts";
import { devicesHook, type DeviceReserver } from "./taskrunner/hooks/devices.ts";
import type { ClientEndpoint } from "../structs/client-endpoint.ts";
import { artifactHook } from "./taskrunner/hooks/artifact.ts";
import { dispatchPayloadHook } from "./taskrunner/hooks/dispatch-payload.ts";
import { logmonHook } from "./taskrunner/hooks/logmon.ts";
import { serviceHook } from "./taskrunner/hooks/service.ts";
import { templateHook, type TemplateHookDeps, type TemplateVariables } from "./taskrunner/hooks/template.ts";
import { statsHook } from "./taskrunner/hooks/stats.ts";
import type { StatsCollector } from "./stats-collector.ts";
import { taskApiHook, type ServeTaskApi } from "./taskrunner/hooks/task-api.ts";
import { identityHook, type SignIdentity } from "./taskrunner/hooks/identity.ts";
import { taskDirHook } from "./taskrunner/hooks/task-dir.ts";
import { validateHook, type DriverHealth } from "./taskrunner/hooks/validate.ts";
import { volumesHook } from "./taskrunner/hooks/volumes.ts";
import { TaskRunner, type TaskRunnerDeps } from "./taskrunner/task-runner.ts";
import type { TaskHook } from "./taskrunner/hooks/hook.ts";
import type { AllocHook } from "./allocrunner/hooks/hook.ts";

/** Paths as an isolated (exec) task sees them inside its chroot. */
const CHROOT_DIRS = { alloc: "/alloc", local: "/local", secrets: "/secrets" } as const;

export interface RunnerFactoryDeps {
  config: AgentConfig;
  node: NodeFingerprint;
  allocRoot: string;
  /** File systems of their own for alloc dirs: ephemeral_disk as a hard limit (client.disk_limit "filesystem"). */
  diskImages: DiskImages | undefined;
  state: ClientState;
  logger: Logger;
  drivers: ReadonlyMap<string, DriverPlugin>;
  driverHealth: (driver: string) => DriverHealth | undefined;
  logmon: LogmonClient;
  previous: PreviousAllocs;
  report: (update: AllocClientUpdate) => void;
  /** Samples every running task's usage; the API serves its newest samples. */
  stats: StatsCollector;
  publishTaskStats?: PublishTaskUsage;
  /** The device plugins, for the instances a task was given. */
  devices: DeviceReserver;
  /** The native service catalog the service and template hooks use. */
  services: Pick<ClientEndpoint, "upsertServices" | "deleteServices" | "getService">;
  /** Serves each task's API socket (secrets/api.sock); none without it. */
  serveTaskApi?: ServeTaskApi;
  /** Signs a task's workload identity (the embedded server's keyring); a task asking for one fails without it. */
  signIdentity?: SignIdentity;
  /** Variables for templates' nomadVar functions (the embedded server's); they fail without it. */
  templateVariables?: TemplateVariables;
}

/** The client's bridge settings and whether they can work here, found on the first alloc that asks. */
let bridgeFound: { key: string; bridge: BridgeNetwork | null; unavailable: string | null } | undefined;

function bridgeNetwork(deps: RunnerFactoryDeps): { bridge: BridgeNetwork | null; unavailable: string | null } {
  const settings = { bridgeName: deps.config.client.bridge_network_name, subnet: deps.config.client.bridge_network_subnet, cniPath: deps.config.client.cni_path };
  const key = JSON.stringify(settings);
  if (bridgeFound?.key !== key) {
    const unavailable = bridgeUnavailable(settings);
    bridgeFound = { key, unavailable, bridge: unavailable === null ? new BridgeNetwork(settings) : null };
  }
  return bridgeFound;
}

/** What an alloc new to this node starts from: its tasks' first states (Received), stored with it by saveNewAllocs. */
export function newAllocState(alloc: Allocation): Omit<StoredAlloc, "alloc"> {
  const tasks = (allocTaskGroup(alloc)?.Tasks ?? []).map((task): [string, StoredTask] => [
    task.Name,
    { state: { ...newTaskState(), Events: [taskEvent(TASK_EVENT.Received)] }, local: null, handleJson: null },
  ]);
  return { local: null, tasks: new Map(tasks) };
}

/**
 * `stored`: what the state DB holds for the alloc and its tasks, already
 * read (a new alloc's first states, or a whole node's at restore). Without
 * it the runners read their own.
 */
export function makeAllocRunner(deps: RunnerFactoryDeps, alloc: Allocation, stored?: Omit<StoredAlloc, "alloc">): AllocRunner {
  const shared = sharedAllocHooks(deps);
  const allocDir = new AllocDir(deps.allocRoot, alloc.ID);
  const logger = deps.logger.child({ alloc_id: alloc.ID });
  const checks = new CheckStatuses();
  // Read only while the alloc runner makes its task runners (in its constructor), then let go:
  // the first states it holds are replaced as the tasks run.
  let storedTasks = stored?.tasks;
  const runner = new AllocRunner({
    alloc,
    allocDir,
    hooks: [shared.allocDir, shared.previousAlloc, diskLimitHook(logger), healthHook(checks, logger), shared.network],
    store: allocStore(deps.state, alloc.ID),
    logger,
    report: deps.report,
    checks,
    ...(stored ? { local: stored.local } : {}),
    taskRunner: (current, task, onStateChange) =>
      makeTaskRunner(deps, current, task, allocDir, logger, onStateChange, checks, storedTasks ? (storedTasks.get(task.Name) ?? { state: null, local: null, handleJson: null }) : undefined),
  });
  storedTasks = undefined;
  return runner;
}

/** The alloc hooks that keep nothing of an alloc: made once per client, as the shared task hooks below. */
interface SharedAllocHooks {
  allocDir: AllocHook;
  previousAlloc: AllocHook;
  network: AllocHook;
}

const sharedAllocHooksOf = new WeakMap<RunnerFactoryDeps, SharedAllocHooks>();

function sharedAllocHooks(deps: RunnerFactoryDeps): SharedAllocHooks {
  let shared = sharedAllocHooksOf.get(deps);
  if (!shared) {
    shared = {
      allocDir: allocDirHook(deps.diskImages),
      previousAlloc: previousAllocHook(deps.previous, (from, to) => deps.logger.info({ alloc_id: to, from }, "moved alloc/data from the previous alloc")),
      network: networkHook({ ...bridgeNetwork(deps), logger: deps.logger }),
    };
    sharedAllocHooksOf.set(deps, shared);
  }
  return shared;
}

/**
 * The task hooks that keep nothing of a task between phases, and the inputs
 * every task shares: made once per client and given to every task runner,
 * since each object made per task stays in the agent's heap while it runs
 * (issue 35: the agent's memory per running task).
 */
interface SharedTaskHooks {
  validate: TaskHook;
  taskDir: TaskHook;
  devices: TaskHook;
  volumes: TaskHook;
  artifacts: TaskHook;
  dispatchPayload: TaskHook;
  templateDeps: TemplateHookDeps;
  /** A task's environment input: one function for every task runner, not a closure per running task (issue 35). */
  envInput: TaskRunnerDeps["envInput"];
  /** An alloc's bridge address, as its network hook saved it; one function for every task runner, as envInput. */
  allocAddress: NonNullable<TaskRunnerDeps["allocAddress"]>;
}

const sharedHooks = new WeakMap<RunnerFactoryDeps, SharedTaskHooks>();

function sharedTaskHooks(deps: RunnerFactoryDeps): SharedTaskHooks {
  let shared = sharedHooks.get(deps);
  if (!shared) {
    const root = process.getuid?.() === 0;
    // The agent's own environment as tasks get it: the agent never changes its environment while it runs.
    const hostEnv = Object.freeze(filterHostEnv(process.env, hostEnvDenylist(deps.config)));
    shared = {
      validate: validateHook(deps.driverHealth),
      taskDir: taskDirHook({ secretsTmpfs: root }),
      devices: devicesHook(deps.devices),
      volumes: volumesHook({ hostVolumes: deps.node.hostVolumes, canMount: root }),
      artifacts: artifactHook(),
      dispatchPayload: dispatchPayloadHook(),
      templateDeps: { getService: (name, namespace) => deps.services.getService(name, namespace), ...(deps.templateVariables ? { variables: deps.templateVariables } : {}) },
      envInput: (alloc, task, allocDir) => envInput(deps, hostEnv, alloc, task, allocDir),
      allocAddress: (allocId) => savedAddress(allocStore(deps.state, allocId).loadLocal()?.network),
    };
    sharedHooks.set(deps, shared);
  }
  return shared;
}

function makeTaskRunner(
  deps: RunnerFactoryDeps,
  alloc: Allocation,
  task: Task,
  allocDir: AllocDir,
  logger: Logger,
  onStateChange: (task: string, state: TaskState) => void,
  checks: CheckStatuses,
  stored: StoredTask | undefined,
): TaskRunner {
  const shared = sharedTaskHooks(deps);
  // One child logger for the runner and its hooks: each is an object and a string of its bindings per task.
  const taskLogger = logger.child({ task: task.Name });
  const driver = deps.drivers.get(task.Driver);
  const taskId = taskIdOf(alloc.ID, task.Name);
  const publish = deps.publishTaskStats;
  // A publisher only when allocation metrics are published: without one the hook keeps no closure (issue 35).
  const stats = driver
    ? statsHook({ collector: deps.stats, driver, taskId, ...(publish ? { publish: (usage: TaskResourceUsage | undefined) => publish(alloc, task.Name, usage) } : {}) })
    : undefined;
  return new TaskRunner({
    alloc,
    task,
    allocDir,
    taskDir: allocDir.taskDir(task.Name),
    driver: driver ?? missingDriver(task.Driver),
    hooks: [
      shared.validate,
      shared.taskDir,
      ...(deps.serveTaskApi ? [taskApiHook(deps.serveTaskApi, taskLogger)] : []),
      identityHook(deps.signIdentity ?? (() => undefined)),
      shared.devices,
      shared.volumes,
      shared.artifacts,
      shared.dispatchPayload,
      // Templates change only with a new alloc (a destructive update), so a task without any never needs the hook.
      ...(task.Templates.length > 0 ? [templateHook(shared.templateDeps)] : []),
      logmonHook(deps.logmon, taskId),
      serviceHook({ endpoint: deps.services, nodeId: deps.node.id, datacenter: deps.config.datacenter, checks }),
      ...(stats ? [stats] : []),
    ],
    store: taskStore(deps.state, alloc.ID, task.Name, task.Driver),
    logger: taskLogger,
    envInput: shared.envInput,
    stdio: { stdoutPath: fifoPath(allocDir.logs, task.Name, "stdout"), stderrPath: fifoPath(allocDir.logs, task.Name, "stderr") },
    cgroupParent: deps.config.client.cgroup_parent,
    allocAddress: shared.allocAddress,
    maxKillTimeoutMs: deps.config.client.max_kill_timeout,
    onStateChange,
    stored,
  });
}

function envInput(deps: RunnerFactoryDeps, hostEnv: Readonly<Record<string, string>>, alloc: Allocation, task: Task, allocDir: AllocDir): Omit<TaskEnvInput, "task"> {
  const group = allocTaskGroup(alloc);
  const taskDir = allocDir.taskDir(task.Name);
  return {
    alloc: { id: alloc.ID, name: alloc.Name, index: allocIndex(alloc.Name), group: alloc.TaskGroup, namespace: alloc.Namespace },
    job: { id: alloc.Job.ID, name: alloc.Job.Name },
    meta: { ...alloc.Job.Meta, ...group?.Meta, ...task.Meta },
    ports: alloc.AllocatedResources.Shared.Ports,
    dirs: task.Driver === "exec" || task.Driver === "docker" ? CHROOT_DIRS : { alloc: allocDir.shared, local: taskDir.local, secrets: taskDir.secrets },
    node: {
      id: deps.node.id,
      name: deps.node.name,
      nodeClass: deps.config.client.node_class,
      datacenter: deps.config.datacenter,
      region: deps.config.region,
      attributes: deps.node.attributes,
      meta: deps.config.client.meta,
    },
    hostEnv,
  };
}

/** client.options "env.denylist" (or Nomad's older "env.blacklist"), else Nomad's default list. */
function hostEnvDenylist(config: AgentConfig): readonly string[] {
  const list = config.client.options["env.denylist"] ?? config.client.options["env.blacklist"];
  if (list === undefined) return DEFAULT_HOST_ENV_DENYLIST;
  return list
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
}

/**
 * Stands in for a driver this node lacks, so the task runner still runs its
 * validate hook, which fails the task with the reason; nothing is started.
 */
function missingDriver(name: string): DriverPlugin {
  const fail = () => Promise.reject(new Error(`driver "${name}" is not available on this node`));
  return {
    name,
    fingerprint: () => ({ detected: false, healthy: false, description: "not available", attributes: {} }),
    startTask: fail,
    recoverTask: fail,
    waitTask: fail,
    stopTask: fail,
    destroyTask: fail,
    inspectTask: () => {
      throw new Error(`driver "${name}" is not available on this node`);
    },
    signalTask: fail,
    execTask: fail,
    execStreamTask: fail,
    taskStats: fail,
  };
}
