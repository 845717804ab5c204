/**
 * The client's device plugins (Nomad's devicemanager): their device groups
 * for the node record, their instances for the tasks placement gave them
 * to, and their latest statistics for the API and the metrics.
 *
 *   start ──> every plugin's fingerprint and stats streams run until stop
 *     │         fingerprint: groups replaced ──> onChange (the node is registered again)
 *     │         stats: the host's device stats replaced, and their index by instance
 *     └──> resolves once each plugin reported its first groups (or ended, or
 *          FIRST_FINGERPRINT_TIMEOUT_MS passed), so the node registers with its devices
 *
 * A task's device statistics are looked up at stats time from its own
 * instances through the index, so the cost follows the task's devices, not
 * the host's.
 */
import type { Logger } from "../../lib/logger.ts";
import { settlesWithin } from "../../lib/timeout.ts";
import type { DevicePlugin, DeviceReservation } from "../../devices/plugin.ts";
import { deviceGroupName, type AllocatedDeviceResource, type DeviceGroupStats, type DeviceId, type DeviceStats, type NodeDeviceResource } from "../../structs/device.ts";

/**
 * How long the node waits for its devices before it registers without them.
 * NVML lists a large machine's GPUs in well under a second; a hung driver
 * must not keep the node away for good (it registers again when they come).
 */
export const FIRST_FINGERPRINT_TIMEOUT_MS = 5_000;

export interface DeviceManagerOptions {
  /** How often plugins report statistics (telemetry.collection_interval). */
  statsIntervalMs: number;
  logger: Logger;
  /** The device groups changed after the first fingerprint. */
  onChange?: () => void;
  /** New host device statistics (for the metrics). */
  onStats?: (stats: DeviceGroupStats[]) => void;
}

const groupKey = (id: DeviceId) => deviceGroupName(id);
const instanceKey = (id: DeviceId, instance: string) => `${groupKey(id)}\0${instance}`;

export class DeviceManager {
  private readonly groups = new Map<DevicePlugin, NodeDeviceResource[]>();
  private readonly stats = new Map<DevicePlugin, DeviceGroupStats[]>();
  /** Each instance's latest statistics, by group and instance ID. */
  private readonly index = new Map<string, DeviceStats>();
  /** Which plugin reported each device group. */
  private readonly owners = new Map<string, DevicePlugin>();
  private readonly abort = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private started = false;

  constructor(
    private readonly plugins: readonly DevicePlugin[],
    private readonly options: DeviceManagerOptions,
  ) {}

  /** Starts every plugin's streams; resolves once the first fingerprints are in (or the wait is over). */
  async start(): Promise<void> {
    const firsts = this.plugins.map((plugin) => {
      let reported!: () => void;
      const first = new Promise<void>((resolve) => (reported = resolve));
      this.loops.push(this.fingerprintLoop(plugin, reported), this.statsLoop(plugin));
      return first;
    });
    if (!(await settlesWithin(Promise.all(firsts), FIRST_FINGERPRINT_TIMEOUT_MS))) {
      this.options.logger.warn({ timeout_ms: FIRST_FINGERPRINT_TIMEOUT_MS }, "device plugins are slow to report; the node registers without their devices for now");
    }
    this.started = true;
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await Promise.all(this.loops);
  }

  /** Every device group on the node (NodeResources.Devices). */
  devices(): NodeDeviceResource[] {
    return [...this.groups.values()].flat();
  }

  /** The host's latest device statistics (HostStats.DeviceStats). */
  hostStats(): DeviceGroupStats[] {
    return [...this.stats.values()].flat();
  }

  /**
   * The latest statistics of the given instances, grouped as allocated
   * (Nomad's computeAllocatedDeviceGroupStats); null for a task without
   * devices, as Nomad reports it.
   */
  statsFor(allocated: readonly AllocatedDeviceResource[]): DeviceGroupStats[] | null {
    if (allocated.length === 0) return null;
    const out: DeviceGroupStats[] = [];
    for (const group of allocated) {
      const instances: Record<string, DeviceStats> = {};
      for (const id of group.DeviceIDs) {
        const found = this.index.get(instanceKey(group, id));
        if (found) instances[id] = found;
      }
      if (Object.keys(instances).length > 0) out.push({ Vendor: group.Vendor, Type: group.Type, Name: group.Name, InstanceStats: instances });
    }
    return out;
  }

  /** What a task needs for the instances it was given; throws when no plugin has them. */
  reserve(allocated: AllocatedDeviceResource): DeviceReservation {
    const plugin = this.owners.get(groupKey(allocated));
    if (!plugin) throw new Error(`no device plugin on this node has device group ${groupKey(allocated)}`);
    return plugin.reserve(allocated.DeviceIDs);
  }

  private async fingerprintLoop(plugin: DevicePlugin, reported: () => void): Promise<void> {
    try {
      for await (const groups of plugin.fingerprint(this.abort.signal)) {
        for (const [key, owner] of this.owners) if (owner === plugin) this.owners.delete(key);
        for (const group of groups) this.owners.set(groupKey(group), plugin);
        this.groups.set(plugin, groups);
        this.options.logger.info({ plugin: plugin.name, groups: groups.map((group) => `${groupKey(group)} x${group.Instances.length}`) }, "devices fingerprinted");
        reported();
        if (this.started) this.options.onChange?.();
      }
    } catch (err) {
      this.options.logger.error({ plugin: plugin.name, err: (err as Error).message }, "device fingerprinting stopped");
    } finally {
      reported();
    }
  }

  private async statsLoop(plugin: DevicePlugin): Promise<void> {
    try {
      for await (const groups of plugin.stats(this.options.statsIntervalMs, this.abort.signal)) {
        this.stats.set(plugin, groups);
        this.rebuildIndex();
        this.options.onStats?.(this.hostStats());
      }
    } catch (err) {
      this.options.logger.error({ plugin: plugin.name, err: (err as Error).message }, "device statistics stopped");
    }
  }

  private rebuildIndex(): void {
    this.index.clear();
    for (const group of this.hostStats()) {
      for (const [id, stats] of Object.entries(group.InstanceStats)) this.index.set(instanceKey(group, id), stats);
    }
  }
}
