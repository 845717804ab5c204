/**
 * A service instance in Nomad's native catalog (ServiceRegistration, Nomad
 * 1.3+): one per task or group `service` block of a running allocation,
 * registered by the client while the task runs and removed when it stops.
 * GET /v1/services lists names per namespace; GET /v1/service/:name lists
 * the instances.
 */
import * as v from "valibot";
import { NonNegativeInt } from "./common.ts";

export const ServiceRegistrationSchema = v.strictObject({
  ID: v.string(),
  ServiceName: v.string(),
  Namespace: v.string(),
  NodeID: v.string(),
  Datacenter: v.string(),
  JobID: v.string(),
  AllocID: v.string(),
  Tags: v.array(v.string()),
  Address: v.string(),
  Port: NonNegativeInt,
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
});
export type ServiceRegistration = v.InferOutput<typeof ServiceRegistrationSchema>;

/** One row of GET /v1/services: a namespace and its services' names and tags. */
export interface ServiceRegistrationListStub {
  Namespace: string;
  Services: { ServiceName: string; Tags: string[] }[];
}
