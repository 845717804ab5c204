/**
 * The `config` block of the drivers drover has (raw_exec and exec): a job
 * keeps any driver's config as written; this reads the one these drivers
 * take. The server checks it on register (a job for a driver drover has
 * should not wait for a node to say its config is wrong) and the client
 * again before a start (an allocation may come from elsewhere).
 */
import * as v from "valibot";
import { DRIVERS, type DriverName } from "./job.ts";

/** `${...}` stays literal: the task runner resolves it. */
export const ExecDriverConfigSchema = v.strictObject({
  command: v.pipe(v.string(), v.minLength(1, "must not be empty")),
  /** HCL2 keeps `args = ["-n", 42]` as written; the driver reads each as text, as Nomad's does. */
  args: v.optional(v.array(v.pipe(v.union([v.string(), v.number(), v.boolean()]), v.transform(String))), []),
});
export type ExecDriverConfig = v.InferOutput<typeof ExecDriverConfigSchema>;

export function isKnownDriver(driver: string): driver is DriverName {
  return (DRIVERS as readonly string[]).includes(driver);
}
