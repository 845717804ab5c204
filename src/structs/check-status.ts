/**
 * The latest result of one service check, as Nomad 1.4+ answers
 * GET /v1/client/allocation/:id/checks (api.AllocCheckStatus): the answer
 * is an object of these by check ID.
 */

/** Nomad's CheckStatus: a check that has not run yet is pending. */
export type NomadCheckStatus = "success" | "failure" | "pending";

/** Nomad's CheckMode: a check with on_update = "ignore" only says whether the service is ready. */
export type CheckMode = "healthiness" | "readiness";

export interface AllocCheckStatus {
  ID: string;
  Mode: CheckMode;
  Status: NomadCheckStatus;
  /** An HTTP check's response code; absent for other checks, as Nomad's omitempty leaves it. */
  StatusCode?: number;
  Output: string;
  /** Unix seconds of the result. */
  Timestamp: number;
  /** The alloc's name (job.group[index]). */
  Group: string;
  /** The task of a task service; absent for a group service. */
  Task?: string;
  Service: string;
  Check: string;
}

export const checkMode = (onUpdate: string): CheckMode => (onUpdate === "ignore" ? "readiness" : "healthiness");
