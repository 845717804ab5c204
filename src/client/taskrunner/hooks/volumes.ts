/**
 * Gives the task its group's host volumes (Nomad's volume hook):
 *
 *   prestart (before every start) ──> each volume_mount: the group's volume (type "host")
 *     ──> the node's host_volume of that source (missing: the task fails)
 *     ──> read-only when the host volume, the group's volume or the mount says so
 *       exec:     handed to the driver, which binds them into the task's root,
 *                 inside the task's own mount namespace (nothing on the host)
 *       raw_exec: bound here, on the host, at <task dir>/<destination>
 *   exited, stop ──> the raw_exec binds are detached (a restart binds them again)
 *
 * Nomad's raw_exec has no mounts (its tasks see the host as it is); drover
 * binds the volume into the task dir so that one job file means the same
 * for both drivers: "/data" is /data in an exec task's chroot and
 * $NOMAD_TASK_DIR/../data, that is <task dir>/data, for raw_exec. Binds
 * are placed and removed by a walk that never follows a symlink the task
 * may have planted (runtime/mounts.ts), and whatever is left below the
 * alloc dir is detached before it is deleted (AllocDir.destroy).
 */
import { statSync } from "node:fs";
import type { VolumeBind } from "../../../drivers/driver.ts";
import { volumeTaskPath } from "../../../lib/volume-paths.ts";
import { bindBeneath, unbindBeneath } from "../../../runtime/mounts.ts";
import { allocTaskGroup } from "../../../structs/alloc.ts";
import type { Task, TaskGroup } from "../../../structs/job.ts";
import type { ClientHostVolume } from "../../../structs/node.ts";
import { UnrecoverableHookError, type PrestartRequest, type PrestartResponse, type TaskHook, type TaskHookContext } from "./hook.ts";

export interface VolumesHookOptions {
  /** The node's host volumes, by name (client.host_volume). */
  hostVolumes: Readonly<Record<string, ClientHostVolume>>;
  /** Whether this agent may mount (root): a raw_exec task's volumes are bound by the agent itself. */
  canMount: boolean;
}

/** The drivers that bind volumes into a root of the task's own; the others get them in the task dir from this hook. */
const ISOLATING_DRIVERS = new Set(["exec", "docker"]);

/**
 * The binds `task` asks for, in Nomad's terms (hostVolumeMountConfigurations);
 * throws UnrecoverableHookError for what no retry can fix.
 */
export function hostVolumeBinds(task: Task, group: TaskGroup | undefined, hostVolumes: Readonly<Record<string, ClientHostVolume>>): VolumeBind[] {
  const requests = group?.Volumes ?? {};
  const missing = [...new Set(Object.values(requests).filter((r) => r.Type === "host" && !(r.Source in hostVolumes)).map((r) => r.Source))];
  if (missing.length > 0) throw new UnrecoverableHookError(`host volume validation error: missing ${missing.map((name) => `"${name}"`).join(", ")}`);
  const binds: VolumeBind[] = [];
  for (const mount of task.VolumeMounts) {
    const request = requests[mount.Volume];
    // A volume that is not the group's was refused when the job registered; another type by the validate hook.
    if (request?.Type !== "host") continue;
    const hostVolume = hostVolumes[request.Source]!;
    const place = volumeTaskPath(mount.Destination);
    if ("problem" in place) throw new UnrecoverableHookError(`volume_mount of "${mount.Volume}": destination "${mount.Destination}" ${place.problem}`);
    binds.push({ hostPath: hostVolume.Path, taskPath: place.path, readOnly: hostVolume.ReadOnly || request.ReadOnly || mount.ReadOnly });
  }
  return binds;
}

function requireDirectory(bind: VolumeBind): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(bind.hostPath).isDirectory();
  } catch {
    // Reported below, as for a file.
  }
  if (!isDirectory) throw new Error(`host volume path ${bind.hostPath} is not a directory on this node`);
}

export function volumesHook(options: VolumesHookOptions): TaskHook {
  /** Detaches the raw_exec binds: the same destinations, walked the same way. */
  const unbind = (ctx: TaskHookContext) => {
    if (ISOLATING_DRIVERS.has(ctx.task.Driver)) return;
    const failures: string[] = [];
    for (const mount of ctx.task.VolumeMounts) {
      const place = volumeTaskPath(mount.Destination);
      if ("problem" in place) continue;
      try {
        unbindBeneath(ctx.taskDir.root, place.path.slice(1));
      } catch (err) {
        failures.push(`${place.path}: ${(err as Error).message}`);
      }
    }
    // Left for AllocDir.destroy, which detaches everything below the alloc dir before deleting it.
    if (failures.length > 0) throw new Error(`could not unbind host volumes: ${failures.join("; ")}`);
  };

  return {
    name: "volumes",
    async prestart(req: PrestartRequest): Promise<PrestartResponse> {
      const binds = hostVolumeBinds(req.task, allocTaskGroup(req.alloc), options.hostVolumes);
      if (binds.length === 0) return { done: true };
      binds.forEach(requireDirectory);
      if (ISOLATING_DRIVERS.has(req.task.Driver)) return { volumes: binds };
      if (!options.canMount) throw new UnrecoverableHookError(`binding host volumes into a ${req.task.Driver} task's directory needs the agent to run as root`);
      for (const bind of binds.toSorted((a, b) => a.taskPath.split("/").length - b.taskPath.split("/").length)) {
        const relative = bind.taskPath.slice(1);
        try {
          // A bind left by an earlier start (an agent that stopped before the exit was seen) is replaced, not stacked.
          unbindBeneath(req.taskDir.root, relative);
        } catch {
          // Nothing of ours can be reached there; the bind below says what is in the way.
        }
        try {
          bindBeneath(bind.hostPath, req.taskDir.root, relative, { readOnly: bind.readOnly });
        } catch (err) {
          throw new Error(`host volume at ${bind.taskPath}: ${(err as Error).message}`);
        }
      }
      return {};
    },
    async exited(req) {
      unbind(req);
    },
    async stop(req) {
      unbind(req);
    },
  };
}
