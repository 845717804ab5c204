/** The agent config's server { *_gc_threshold } keys, as the server's GC takes them. */
import type { ServerConfig } from "../config/schema.ts";
import type { GcThresholds } from "../server/gc.ts";

export function gcThresholdsOf(config: ServerConfig): GcThresholds {
  return {
    job: config.job_gc_threshold,
    eval: config.eval_gc_threshold,
    batchEval: config.batch_eval_gc_threshold,
    deployment: config.deployment_gc_threshold,
    node: config.node_gc_threshold,
  };
}
