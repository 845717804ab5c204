/**
 * What this node is, found once at start-up: the facts placement and the API
 * report, under Nomad's attribute names (`kernel.name`, `cpu.totalcompute`,
 * `unique.hostname`, ...).
 */
import { mkdirSync } from "node:fs";
import { hostname } from "node:os";
import { detectCgroups, type CgroupLayout } from "../../cgroups/detect.ts";
import { VERSION } from "../../lib/version.ts";
import type { AgentConfig } from "../../config/schema.ts";
import { cpuAttributes, cpuFacts } from "./cpu.ts";
import { hostAttributes } from "./host.ts";
import { readMeminfo } from "../../lib/procfs.ts";
import { memoryAttributes } from "./memory.ts";
import { loadOrCreateNodeId, loadOrCreateSecretId } from "./node-id.ts";
import { storageAttributes, volumeFacts } from "./storage.ts";
import { BYTES_PER_MIB } from "../../lib/units.ts";
import type { ClientHostVolume } from "../../structs/node.ts";
import { hostVolumes } from "./host-volumes.ts";
import { bridgeUnavailable } from "../network/support.ts";

export interface NodeFingerprint {
  id: string;
  /** Authenticates the node to Nomad servers (client mode); kept beside the ID. */
  secretId: string;
  name: string;
  attributes: Record<string, string>;
  /** Capacity before reservations. */
  resources: { cpuMhz: number; cores: number; memoryMb: number; diskMb: number };
  cgroups: CgroupLayout;
  /** client.host_volume, checked: by name. */
  hostVolumes: Record<string, ClientHostVolume>;
  /** The host bridge of group bridge networks, where they can be built here. */
  bridge?: string;
}


function cgroupAttributes(layout: CgroupLayout): Record<string, string> {
  switch (layout.mode) {
    case "v2":
      return { "unique.cgroup.version": "v2", "unique.cgroup.mountpoint": layout.mount };
    case "v1":
      return { "unique.cgroup.version": "v1", "unique.cgroup.mountpoint": layout.mounts.memory ?? "" };
    case "none":
      return {};
  }
}

/** Nomad's bridge fingerprint: the bridge's name where bridge networks can be built (client/network/support.ts), else undefined. */
function bridgeFingerprint(config: AgentConfig): string | undefined {
  const settings = { bridgeName: config.client.bridge_network_name, subnet: config.client.bridge_network_subnet, cniPath: config.client.cni_path };
  return bridgeUnavailable(settings) === null ? settings.bridgeName : undefined;
}

export function fingerprint(config: AgentConfig, clientDir: string, allocDir: string): NodeFingerprint {
  const cpu = cpuFacts();
  const meminfo = readMeminfo();
  mkdirSync(allocDir, { recursive: true, mode: 0o711 });
  const volume = volumeFacts(allocDir);
  const cgroups = detectCgroups();
  const bridge = bridgeFingerprint(config);
  const cpuMhz = config.client.cpu_total_compute ?? cpu.totalCompute;
  const memoryMb = config.client.memory_total_mb ?? Math.floor((meminfo.get("MemTotal") ?? 0) / BYTES_PER_MIB);
  return {
    id: loadOrCreateNodeId(clientDir),
    secretId: loadOrCreateSecretId(clientDir),
    name: config.name ?? hostname(),
    attributes: {
      ...hostAttributes(),
      ...cpuAttributes({ ...cpu, totalCompute: cpuMhz }),
      ...memoryAttributes(meminfo),
      ...storageAttributes(allocDir, volume),
      ...cgroupAttributes(cgroups),
      ...(bridge ? { "nomad.bridge.hairpin_mode": "false" } : {}),
      "drover.version": VERSION,
    },
    resources: { cpuMhz, cores: cpu.cores, memoryMb, diskMb: Math.floor(volume.freeBytes / BYTES_PER_MIB) },
    cgroups,
    hostVolumes: hostVolumes(config),
    ...(bridge ? { bridge } : {}),
  };
}
