/**
 * Nomad's VolumeRequest.Validate (1.10): what a group's `volume` block must
 * say for its type, its access mode and per_alloc, checked on register so a
 * volume request that can never be met is a 400 naming the field. Whether
 * drover mounts it (host volumes only) is decided at placement and task start.
 */
import type { Job, TaskGroup, VolumeRequest } from "../structs/job.ts";
import type { PathSegment } from "./paths.ts";
import type { Problem } from "./validate.ts";

const VOLUME_TYPES = ["host", "csi"] as const;
/** Host volume access modes (Nomad 1.10's dynamic host volumes); "" leaves it to the volume. */
const HOST_ACCESS_MODES = ["", "single-node-reader-only", "single-node-writer", "single-node-single-writer", "single-node-multi-writer"];
const CSI_ATTACHMENT_MODES = ["file-system", "block-device"];
const CSI_ACCESS_MODES = ["single-node-reader-only", "single-node-writer", "multi-node-reader-only", "multi-node-single-writer", "multi-node-multi-writer"];

function requestProblems(volume: VolumeRequest, job: Pick<Job, "Type">, group: TaskGroup, path: PathSegment[]): Problem[] {
  const problems: Problem[] = [];
  const at = (field: string, message: string) => problems.push({ path: [...path, field], message });
  if (!(VOLUME_TYPES as readonly string[]).includes(volume.Type)) {
    at("Type", `volume has unrecognized type "${volume.Type}" (use ${VOLUME_TYPES.map((t) => `"${t}"`).join(" or ")})`);
    return problems;
  }
  if (volume.Source === "") at("Source", `a ${volume.Type} volume needs a source`);
  if (volume.PerAlloc) {
    if (job.Type === "system" || job.Type === "sysbatch") at("PerAlloc", "volume cannot be per_alloc for system or sysbatch jobs");
    if ((group.Update?.Canary ?? 0) > 0) at("PerAlloc", "volume cannot be per_alloc when canaries are in use");
    if (volume.Sticky) at("PerAlloc", "volume cannot be per_alloc and sticky at the same time");
  }
  const single = group.Count > 1 && !volume.PerAlloc;
  if (volume.Type === "host") {
    if (volume.MountOptions !== null) at("MountOptions", "host volumes cannot have mount options");
    if (!HOST_ACCESS_MODES.includes(volume.AccessMode)) at("AccessMode", `host volumes cannot be mounted with access mode "${volume.AccessMode}"`);
    else if (volume.AccessMode === "single-node-reader-only" && !volume.ReadOnly) at("ReadOnly", `${volume.AccessMode} volumes must be read-only`);
    return problems;
  }
  if (volume.AttachmentMode === "") at("AttachmentMode", "CSI volumes must have an attachment mode");
  else if (!CSI_ATTACHMENT_MODES.includes(volume.AttachmentMode)) at("AttachmentMode", `unknown attachment mode "${volume.AttachmentMode}" (use ${CSI_ATTACHMENT_MODES.join(" or ")})`);
  else if (volume.AttachmentMode === "block-device" && volume.MountOptions !== null) at("MountOptions", "block devices cannot have mount options");
  if (volume.AccessMode === "") at("AccessMode", "CSI volumes must have an access mode");
  else if (!CSI_ACCESS_MODES.includes(volume.AccessMode)) at("AccessMode", `unknown access mode "${volume.AccessMode}" (use ${CSI_ACCESS_MODES.join(", ")})`);
  else if (volume.AccessMode.endsWith("reader-only") && !volume.ReadOnly) at("ReadOnly", `${volume.AccessMode} volumes must be read-only`);
  if (single && volume.AccessMode === "single-node-reader-only") at("AccessMode", `volume with ${volume.AccessMode} access mode allows only one reader`);
  if (single && volume.AccessMode === "single-node-writer") at("AccessMode", `volume with ${volume.AccessMode} access mode allows only one reader or writer`);
  if (single && volume.AccessMode === "multi-node-single-writer" && !volume.ReadOnly) at("AccessMode", `volume with ${volume.AccessMode} access mode allows only one writer`);
  return problems;
}

/** Every volume request of `group`, at `at` (the group's path). */
export function volumeProblems(job: Pick<Job, "Type">, group: TaskGroup, at: PathSegment[]): Problem[] {
  return Object.entries(group.Volumes).flatMap(([name, volume]) => requestProblems(volume, job, group, [...at, "Volumes", name]));
}
