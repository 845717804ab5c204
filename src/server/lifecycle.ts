/**
 * The embedded server as one of the agent's services: opened before the HTTP
 * API mounts its routes, collecting garbage on a timer while it runs, closed
 * (waking every blocking query) when the agent stops.
 */
import type { Service } from "../lib/service.ts";
import type { Logger } from "../lib/logger.ts";
import type { Server } from "./server.ts";

/** `gcIntervalMs`: the agent config's server.job_gc_interval, how often finished allocs, evals and dead jobs are looked at. */
export function serverService(server: Server, logger: Logger, gcIntervalMs: number): Service {
  let timer: ReturnType<typeof setInterval> | undefined;
  return {
    name: "server",
    start() {
      timer = setInterval(() => {
        try {
          const removed = server.collectGarbage();
          if (Object.values(removed).some((count) => count > 0)) logger.debug({ removed }, "server garbage collected");
        } catch (err) {
          logger.warn({ err: (err as Error).message }, "server garbage collection failed; will retry");
        }
      }, gcIntervalMs);
      timer.unref?.();
    },
    stop() {
      clearInterval(timer);
      server.close();
    },
  };
}
