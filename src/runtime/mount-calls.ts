/**
 * The mount calls the mount thread makes (runtime/mount-thread.ts), as
 * messages: what it is asked and what it answers, and the calls themselves,
 * which also run on the agent's own thread where no mount thread can start.
 */
import { detach, mountLoopImage } from "./mounts.ts";

export type MountCall = { op: "mountLoop"; image: string; target: string; fsType: string; flags: number } | { op: "detach"; points: readonly string[] };
export type MountRequest = MountCall & { id: number };

/** `error` is the failure's message; `detached`/`failed` answer a detach. */
export interface MountReply {
  id: number;
  error?: string;
  detached?: string[];
  failed?: string[];
}

export function runMountCall(request: MountRequest): MountReply {
  if (request.op === "detach") return { id: request.id, ...detach(request.points) };
  try {
    mountLoopImage(request.image, request.target, request.fsType, request.flags);
    return { id: request.id };
  } catch (err) {
    return { id: request.id, error: (err as Error).message };
  }
}
