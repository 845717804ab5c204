/**
 * The device plugin interface, shaped like Nomad's DevicePlugin: a plugin
 * finds device groups on the host and keeps reporting them as they change,
 * says how a task gets the instances placement gave it, and reports each
 * instance's statistics on an interval.
 *
 *   fingerprint(signal) ──> device groups now, then again whenever they change
 *   stats(interval, signal) ──> every instance's statistics, each interval
 *   reserve(ids) ──> the env, mounts and device nodes a task needs for them
 *
 * The streams end when `signal` aborts; a plugin with nothing to report (no
 * hardware, disabled) ends them at once.
 */
import type { DeviceGroupStats, NodeDeviceResource } from "../structs/device.ts";

/** A host path a task sees at `taskPath`. */
export interface DeviceMount {
  taskPath: string;
  hostPath: string;
  readOnly: boolean;
}

/** A device node a task gets, and what the devices cgroup lets it do with it ("rwm"). */
export interface DeviceNode {
  taskPath: string;
  hostPath: string;
  permissions: string;
}

/** What a task needs to use its instances (Nomad's ContainerReservation). */
export interface DeviceReservation {
  env: Record<string, string>;
  mounts: DeviceMount[];
  devices: DeviceNode[];
}

export interface DevicePlugin {
  /** The plugin's name in the agent config (`plugin "nvidia"`). */
  readonly name: string;
  fingerprint(signal: AbortSignal): AsyncIterable<NodeDeviceResource[]>;
  /** Throws when an ID is not one of the plugin's current instances. */
  reserve(ids: readonly string[]): DeviceReservation;
  stats(intervalMs: number, signal: AbortSignal): AsyncIterable<DeviceGroupStats[]>;
}
