/**
 * Nomad's host volume feasibility check (scheduler.HostVolumeChecker): a
 * group's `volume { type = "host" source = "x" }` needs a host volume named
 * "x" on the node, and one the node offers read-only only suits a request
 * that is read-only too. Other volume types are not the node's to judge here.
 */
import type { TaskGroup } from "../../structs/job.ts";
import type { Node } from "../../structs/node.ts";

/** Nomad's filter reason, as the placement failure names it. */
export const MISSING_HOST_VOLUMES = "missing compatible host volumes";

/** MISSING_HOST_VOLUMES when `node` cannot give `group` its host volumes, or undefined. */
export function hostVolumeProblem(node: Pick<Node, "HostVolumes">, group: Pick<TaskGroup, "Volumes">): string | undefined {
  const fits = Object.values(group.Volumes)
    .filter((request) => request.Type === "host")
    .every((request) => {
      const offered = node.HostVolumes[request.Source];
      return offered !== undefined && (!offered.ReadOnly || request.ReadOnly);
    });
  return fits ? undefined : MISSING_HOST_VOLUMES;
}
