/**
 * Device instances on one node: which a task may have, and handing them out
 * without ever giving one instance to two allocs (Nomad's DeviceChecker and
 * deviceAllocator, for one node).
 *
 *   feasible(group)  the node has enough healthy matching instances, used or not
 *                    (else the node is filtered: "missing devices")
 *   offer(group)     picks free instances for every device request of every task,
 *                    best affinity first; takes nothing (else "devices: ..." exhausted)
 *   take(offer)      marks the offer's instances used, once placement is certain
 *
 * A request matches a device group when the group's vendor/type/name fit the
 * request's name and every constraint holds on the group's attributes.
 */
import type { Allocation } from "../../structs/alloc.ts";
import { compareAttributes, parseAttribute } from "../../structs/device-attribute.ts";
import {
  deviceIdMatches,
  requestedDeviceId,
  type AllocatedDeviceResource,
  type Attribute,
  type NodeDeviceResource,
  type RequestedDevice,
} from "../../structs/device.ts";
import type { Constraint, TaskGroup } from "../../structs/job.ts";

/** Per task: the device instances placement gives it. */
export type DeviceOffer = Record<string, AllocatedDeviceResource[]>;

export type DeviceResult = { ok: true; offer: DeviceOffer } | { ok: false; reason: string };

interface GroupUsage {
  group: NodeDeviceResource;
  /** Healthy instances no alloc holds, in the order the plugin lists them. */
  free: string[];
}

/** What a constraint's target names on a device group (Nomad's resolveDeviceTarget); a literal is parsed as one. */
function resolveTarget(target: string, group: NodeDeviceResource): Attribute | undefined {
  if (!target.startsWith("${")) return parseAttribute(target);
  switch (target) {
    case "${device.model}":
      return { String: group.Name, Unit: "" };
    case "${device.vendor}":
      return { String: group.Vendor, Unit: "" };
    case "${device.type}":
      return { String: group.Type, Unit: "" };
  }
  const attr = /^\$\{device\.attr\.(.+)\}$/.exec(target)?.[1];
  return attr === undefined ? undefined : group.Attributes[attr];
}

function setItems(text: string): string[] {
  return text.split(",").map((item) => item.trim());
}

/** Nomad's checkAttributeConstraint: a comparison with a missing side holds only for "!=" and is_not_set. */
function ruleHolds(rule: Constraint, group: NodeDeviceResource): boolean {
  const left = resolveTarget(rule.LTarget, group);
  const right = resolveTarget(rule.RTarget, group);
  switch (rule.Operand) {
    case "is_set":
      return left !== undefined;
    case "is_not_set":
      return left === undefined;
    case "!=":
    case "not": {
      if (!left && !right) return false;
      if (!left || !right) return true;
      const order = compareAttributes(left, right);
      return order !== undefined && order !== 0;
    }
  }
  if (!left || !right) return false;
  switch (rule.Operand) {
    case "=":
    case "==":
    case "is":
      return compareAttributes(left, right) === 0;
    case "<":
      return compareAttributes(left, right) === -1;
    case "<=": {
      const order = compareAttributes(left, right);
      return order !== undefined && order !== 1;
    }
    case ">":
      return compareAttributes(left, right) === 1;
    case ">=": {
      const order = compareAttributes(left, right);
      return order !== undefined && order !== -1;
    }
  }
  if (left.String === undefined || right.String === undefined) return false;
  const [text, pattern] = [left.String, right.String];
  switch (rule.Operand) {
    case "regexp":
      return new RegExp(pattern).test(text);
    case "set_contains":
    case "set_contains_all": {
      const have = new Set(setItems(text));
      return setItems(pattern).every((item) => have.has(item));
    }
    case "set_contains_any": {
      const have = new Set(setItems(text));
      return setItems(pattern).some((item) => have.has(item));
    }
    default:
      return false;
  }
}

/** The group is of the kind the request names and meets all its constraints (Nomad's nodeDeviceMatches). */
function groupMatches(group: NodeDeviceResource, request: RequestedDevice): boolean {
  return deviceIdMatches(group, requestedDeviceId(request.Name)) && request.Constraints.every((rule) => ruleHolds(rule, group));
}

/** The affinity score of a group for a request: matched weights over the total, -1..1 (Nomad's choiceScore). */
function affinityScore(group: NodeDeviceResource, request: RequestedDevice): number {
  const total = request.Affinities.reduce((sum, affinity) => sum + Math.abs(affinity.Weight), 0);
  if (total === 0) return 0;
  const matched = request.Affinities.filter((affinity) => ruleHolds(affinity, group)).reduce((sum, affinity) => sum + affinity.Weight, 0);
  return matched / total;
}

function requestsOf(group: TaskGroup): { task: string; request: RequestedDevice }[] {
  return group.Tasks.flatMap((task) => task.Resources.Devices.map((request) => ({ task: task.Name, request })));
}

export class DeviceLedger {
  private readonly groups: GroupUsage[];

  /** `holding`: the node's allocs that still occupy it; their instances are not free. */
  constructor(devices: readonly NodeDeviceResource[], holding: readonly Allocation[]) {
    const used = new Set(
      holding.flatMap((alloc) => Object.values(alloc.AllocatedResources.Tasks).flatMap((task) => task.Devices.flatMap((device) => device.DeviceIDs))),
    );
    this.groups = devices.map((group) => ({
      group,
      free: group.Instances.filter((instance) => instance.Healthy && !used.has(instance.ID)).map((instance) => instance.ID),
    }));
  }

  /**
   * Why the node can never run the group's device requests, counting healthy
   * instances whether used or not (Nomad's DeviceChecker), or undefined.
   */
  missing(group: TaskGroup): string | undefined {
    const healthy = new Map(this.groups.map((usage) => [usage, usage.group.Instances.filter((instance) => instance.Healthy).length]));
    for (const { request } of requestsOf(group)) {
      const found = [...healthy.entries()].find(([usage, count]) => count >= request.Count && groupMatches(usage.group, request));
      if (!found) return `missing devices: ${request.Count} x ${request.Name}`;
      healthy.set(found[0], found[1] - request.Count);
    }
    return undefined;
  }

  /** Free instances for every request of the group's tasks, taking nothing yet; or why there are not enough. */
  offer(group: TaskGroup): DeviceResult {
    const taken = new Map<GroupUsage, number>();
    const offer: DeviceOffer = {};
    for (const { task, request } of requestsOf(group)) {
      let best: { usage: GroupUsage; score: number } | undefined;
      let mostFree = 0;
      for (const usage of this.groups) {
        if (!groupMatches(usage.group, request)) continue;
        const free = usage.free.length - (taken.get(usage) ?? 0);
        mostFree = Math.max(mostFree, free);
        if (free < request.Count) continue;
        const score = affinityScore(usage.group, request);
        if (!best || score > best.score) best = { usage, score };
      }
      if (!best) return { ok: false, reason: `devices: no devices match request ${request.Count} x ${request.Name} (${mostFree} free)` };
      const start = taken.get(best.usage) ?? 0;
      taken.set(best.usage, start + request.Count);
      const { Vendor, Type, Name } = best.usage.group;
      (offer[task] ??= []).push({ Vendor, Type, Name, DeviceIDs: best.usage.free.slice(start, start + request.Count) });
    }
    return { ok: true, offer };
  }

  /** Marks an offer's instances used, so no later placement in this round gets them. */
  take(offer: DeviceOffer): void {
    const ids = new Set(Object.values(offer).flatMap((devices) => devices.flatMap((device) => device.DeviceIDs)));
    for (const usage of this.groups) usage.free = usage.free.filter((id) => !ids.has(id));
  }
}
