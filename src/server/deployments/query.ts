/** Finding a job's deployments among the server's (pure functions over the rows they are given). */
import type { Deployment } from "../../structs/deployment.ts";
import type { Job } from "../../structs/job.ts";

/** The deployments of this incarnation of the job, newest first. */
export function deploymentsOfJob(deployments: Iterable<Deployment>, job: Pick<Job, "ID" | "CreateIndex">): Deployment[] {
  const out: Deployment[] = [];
  for (const deployment of deployments) if (deployment.JobID === job.ID && deployment.JobCreateIndex === job.CreateIndex) out.push(deployment);
  return out.sort((a, b) => b.CreateIndex - a.CreateIndex);
}

/** The job's latest deployment, or undefined. */
export function latestDeployment(deployments: Iterable<Deployment>, job: Pick<Job, "ID" | "CreateIndex">): Deployment | undefined {
  let latest: Deployment | undefined;
  for (const deployment of deployments) {
    if (deployment.JobID !== job.ID || deployment.JobCreateIndex !== job.CreateIndex) continue;
    if (!latest || deployment.CreateIndex > latest.CreateIndex) latest = deployment;
  }
  return latest;
}
