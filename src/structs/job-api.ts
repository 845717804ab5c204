/**
 * A job as the API serves it: the stored job plus the fields Nomad's
 * clients dereference that drover's job does not carry yet. `Stable` is
 * false for every version until deployments (or `job stable`) mark one, as
 * Nomad leaves it for a job that never had a deployment.
 */
import type { Job } from "./job.ts";

export function apiJob(job: Job) {
  return { Stable: false, ...job };
}
export type ApiJob = ReturnType<typeof apiJob>;
