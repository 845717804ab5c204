/** Nomad's exec pid_mode and ipc_mode (job config and plugin defaults): the task's own namespace, or the host's. */
import * as v from "valibot";

export const IsolationModeSchema = v.picklist(["private", "host"], 'must be "private" or "host"');
export type IsolationMode = v.InferOutput<typeof IsolationModeSchema>;
