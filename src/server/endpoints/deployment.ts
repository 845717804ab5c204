/**
 * Deployments (Nomad's Deployment endpoint). drover does not run
 * deployments yet (issue 19), so every job is a job without one and the
 * answers are Nomad's for that case: no latest deployment, empty lists, and
 * "not found" for an ID. The routes already call this object, so the
 * deployment watcher plugs in here.
 */
import { notFound } from "../errors.ts";

/** Nomad's Deployment; none exist yet, so its fields are left to the code that creates them. */
export type Deployment = Record<string, unknown>;

export class DeploymentEndpoint {
  list(_prefix?: string): Deployment[] {
    return [];
  }

  get(id: string): Deployment {
    throw notFound(`deployment "${id}"`);
  }

  /** The job's deployments, newest first; `all` includes those of a purged job of the same ID. */
  ofJob(_jobId: string, _all: boolean): Deployment[] {
    return [];
  }

  /** The job's latest deployment, or null (Nomad's answer for a job that never had one). */
  latestOfJob(_jobId: string): Deployment | null {
    return null;
  }
}
