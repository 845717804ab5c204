/**
 * Finding a node for one allocation: Nomad's feasibility checks (datacenter,
 * node ready and eligible, the job's constraints, drivers present, the
 * group's and tasks' constraints, host volumes, distinct_hosts/distinct_property
 * (see feasible/), the devices the tasks ask for) then the fit of CPU, memory,
 * disk, device instances and ports against what the node has left. A
 * Planner sees the node
 * usage as it stood when the round began plus every placement it has made
 * since, so one round never double-books.
 *
 * Each attempt returns Nomad's AllocMetric, so a failure says why
 * ("Dimension "memory" exhausted on 1 nodes").
 */
import type { AllocatedResources, Allocation, AllocMetric } from "../../structs/alloc.ts";
import type { Job, Port, TaskGroup } from "../../structs/job.ts";
import type { Node } from "../../structs/node.ts";
import { nodeInPool } from "../../structs/node-pool.ts";
import { parsePortSpec } from "../../lib/port-spec.ts";
import { DeviceLedger, type DeviceOffer } from "./devices.ts";
import { hostVolumeProblem } from "./host-volumes.ts";
import { PortLedger } from "./ports.ts";
import { affinityScore } from "./feasible/affinity.ts";
import { failedConstraint, groupConstraints } from "./feasible/constraints.ts";
import { distinctProblem, type ProposedAlloc } from "./feasible/distinct.ts";
import { addDemand, allocatedDemand, exhaustedDimension, groupDemand, NO_DEMAND, nodeCapacity, type Demand } from "../../structs/resources.ts";

export type Placement = { ok: true; node: Node; resources: AllocatedResources; metric: AllocMetric } | { ok: false; metric: AllocMetric };

interface NodeUsage {
  node: Node;
  used: Demand;
  ports: PortLedger;
  devices: DeviceLedger;
}

/** The address allocation ports are bound on when the node reports none. */
const LOOPBACK = "127.0.0.1";

export function emptyMetric(): AllocMetric {
  return {
    NodesEvaluated: 0,
    NodesFiltered: 0,
    NodesAvailable: {},
    ClassFiltered: null,
    ConstraintFiltered: null,
    NodesExhausted: 0,
    ClassExhausted: null,
    DimensionExhausted: null,
    QuotaExhausted: null,
    Scores: null,
    ScoreMetaData: null,
    AllocationTime: 0,
    CoalescedFailures: 0,
  };
}

function bump(counts: Record<string, number> | null, key: string): Record<string, number> {
  const out = counts ?? {};
  out[key] = (out[key] ?? 0) + 1;
  return out;
}

/** Nomad 1.5+ datacenter patterns: `*` and `?` globs. */
export function datacenterMatches(patterns: readonly string[], datacenter: string): boolean {
  return patterns.some((pattern) => {
    const regex = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
    return new RegExp(`^${regex}$`).test(datacenter);
  });
}

/** Nomad's network check: a group's mode other than host needs a node network of that mode (bridge: the bridge fingerprint). */
function networkProblem(node: Node, group: TaskGroup): string | undefined {
  const mode = group.Networks[0]?.Mode || "host";
  if (mode === "host" || mode === "none") return undefined;
  return node.NodeResources.Networks.some((network) => (network.Mode || "host") === mode) ? undefined : "missing network";
}

/** Why `node` cannot run `group`'s drivers (Nomad's constraint text, with the driver's own reason), or undefined. */
function driverProblem(node: Node, group: TaskGroup): string | undefined {
  for (const task of group.Tasks) {
    const driver = node.Drivers[task.Driver];
    if (!driver || !driver.Detected) return `missing driver "${task.Driver}"`;
    if (!driver.Healthy) return `driver "${task.Driver}" unhealthy: ${driver.HealthDescription}`;
  }
  return undefined;
}

function nodeIp(node: Node): string {
  return node.NodeResources.Networks[0]?.IP || LOOPBACK;
}

function allocatedResources(group: TaskGroup, ip: string, assignment: { reserved: Port[]; dynamic: Port[] }, devices: DeviceOffer): AllocatedResources {
  const ports = [...assignment.reserved, ...assignment.dynamic];
  return {
    Tasks: Object.fromEntries(
      group.Tasks.map((task) => [
        task.Name,
        {
          Cpu: { CpuShares: task.Resources.CPU },
          Memory: { MemoryMB: task.Resources.MemoryMB, MemoryMaxMB: task.Resources.MemoryMaxMB },
          Networks: null,
          Devices: devices[task.Name] ?? [],
        },
      ]),
    ),
    TaskLifecycles: Object.fromEntries(group.Tasks.map((task) => [task.Name, task.Lifecycle])),
    Shared: {
      DiskMB: group.EphemeralDisk.SizeMB,
      Networks: group.Networks.map((network) => ({ ...network, IP: ip, ReservedPorts: assignment.reserved, DynamicPorts: assignment.dynamic })),
      Ports: ports.map((port) => ({ Label: port.Label, Value: port.Value, To: port.To, HostIP: ip })),
    },
  };
}

export class Planner {
  private readonly usage: NodeUsage[];
  /** Allocs told to run on each node, and this round's placements: what distinct_* constraints count. */
  private readonly proposed: ProposedAlloc[];
  private readonly nodeById: Map<string, Node>;

  /**
   * `holding`: every alloc that still occupies a node (see holdsResources).
   * `hostBound`: ports bound on the host, read once per round.
   */
  constructor(nodes: readonly Node[], holding: readonly Allocation[], hostBound: ReadonlySet<number>) {
    this.nodeById = new Map(nodes.map((node) => [node.ID, node]));
    this.proposed = holding.filter((alloc) => alloc.DesiredStatus === "run").map(({ JobID, TaskGroup, NodeID }) => ({ JobID, TaskGroup, NodeID }));
    this.usage = [...nodes]
      .sort((a, b) => a.ID.localeCompare(b.ID))
      .map((node) => {
        const allocs = holding.filter((alloc) => alloc.NodeID === node.ID);
        const taken = [
          ...parsePortSpec(node.ReservedResources.Networks.ReservedHostPorts),
          ...allocs.flatMap((alloc) => alloc.AllocatedResources.Shared.Ports.map((port) => port.Value)),
        ];
        return {
          node,
          used: allocs.reduce((sum, alloc) => addDemand(sum, allocatedDemand(alloc.AllocatedResources)), NO_DEMAND),
          ports: new PortLedger(taken, hostBound, { min: node.NodeResources.MinDynamicPort, max: node.NodeResources.MaxDynamicPort }),
          devices: new DeviceLedger(node.NodeResources.Devices, allocs),
        };
      });
  }

  /** `onNode`: only that node is tried (a system job's alloc belongs to its node). */
  place(job: Job, group: TaskGroup, onNode?: string): Placement {
    const started = performance.now();
    const metric = emptyMetric();
    const want = groupDemand(group);
    const network = group.Networks[0];
    for (const entry of this.usage) {
      const { node } = entry;
      if (onNode !== undefined && node.ID !== onNode) continue;
      if (!datacenterMatches(job.Datacenters, node.Datacenter) || !nodeInPool(job.NodePool, node.NodePool)) continue;
      if (node.Status !== "ready" || node.SchedulingEligibility !== "eligible" || node.Drain) continue;
      metric.NodesAvailable[node.Datacenter] = (metric.NodesAvailable[node.Datacenter] ?? 0) + 1;
      metric.NodesEvaluated++;
      const constraints = groupConstraints(job, group);
      const filtered =
        failedConstraint(constraints.job, node) ??
        driverProblem(node, group) ??
        networkProblem(node, group) ??
        failedConstraint(constraints.group, node) ??
        hostVolumeProblem(node, group) ??
        distinctProblem(job, group, node, this.proposed, (id) => this.nodeById.get(id));
      if (filtered) {
        metric.NodesFiltered++;
        metric.ConstraintFiltered = bump(metric.ConstraintFiltered, filtered);
        continue;
      }
      const missingDevices = entry.devices.missing(group);
      if (missingDevices) {
        metric.NodesFiltered++;
        metric.ConstraintFiltered = bump(metric.ConstraintFiltered, missingDevices);
        continue;
      }
      const dimension = exhaustedDimension(nodeCapacity(node), entry.used, want);
      if (dimension) {
        metric.NodesExhausted++;
        metric.DimensionExhausted = bump(metric.DimensionExhausted, dimension);
        continue;
      }
      const devices = entry.devices.offer(group);
      if (!devices.ok) {
        metric.NodesExhausted++;
        metric.DimensionExhausted = bump(metric.DimensionExhausted, devices.reason);
        continue;
      }
      // Ports last: on success they are taken at once, so nothing after them may fail.
      const ports = entry.ports.assign(network?.ReservedPorts ?? [], network?.DynamicPorts ?? []);
      if (!ports.ok) {
        metric.NodesExhausted++;
        metric.DimensionExhausted = bump(metric.DimensionExhausted, ports.dimension);
        continue;
      }
      entry.devices.take(devices.offer);
      entry.used = addDemand(entry.used, want);
      this.proposed.push({ JobID: job.ID, TaskGroup: group.Name, NodeID: node.ID });
      const affinity = affinityScore(job, group, node);
      if (affinity !== undefined) metric.ScoreMetaData = [{ NodeID: node.ID, Scores: { "node-affinity": affinity }, NormScore: affinity }];
      metric.AllocationTime = Math.round((performance.now() - started) * 1e6);
      return { ok: true, node, resources: allocatedResources(group, nodeIp(node), ports, devices.offer), metric };
    }
    metric.AllocationTime = Math.round((performance.now() - started) * 1e6);
    return { ok: false, metric };
  }
}
