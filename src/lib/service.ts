/**
 * A part of the agent with a life of its own (the HTTP API, the host stats
 * sampler, the client, the server). The agent starts services in order and
 * stops them in reverse, so each one may rely on those started before it.
 */
export interface Service {
  readonly name: string;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

/** A service that runs `tick` every `intervalMs` until stopped. */
export function intervalService(name: string, intervalMs: number, tick: () => void): Service {
  let timer: ReturnType<typeof setInterval> | undefined;
  return {
    name,
    start() {
      timer = setInterval(tick, intervalMs);
    },
    stop() {
      clearInterval(timer);
    },
  };
}
