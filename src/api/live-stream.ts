/**
 * A response body fed by a subscription: the agent's log for `monitor`,
 * committed writes for the event stream. It ends when the client goes away,
 * and also when the client reads too slowly to keep up: past
 * `maxPendingChunks` unread chunks it is cut off rather than buffering
 * without bound.
 *
 *   subscribe(push) ──> push(chunk) ──> queued ──> client reads
 *        │                   └── too many unread: unsubscribe, end the body
 *        └── client gone (abort or cancel): unsubscribe
 */

export interface LiveStreamOptions {
  /** Starts the subscription; returns the function that ends it. */
  subscribe(push: (chunk: Uint8Array) => void): () => void;
  /** Ends the stream when the request is aborted. */
  signal: AbortSignal;
  /** Unread chunks tolerated before the client is cut off. */
  maxPendingChunks: number;
  /** An empty chunk sent after this much silence, so idle proxies keep the connection. */
  heartbeat?: { everyMs: number; chunk: Uint8Array };
}

export function liveStream(options: LiveStreamOptions): ReadableStream<Uint8Array> {
  let unsubscribe: (() => void) | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  let ended = false;
  let lastSent = Date.now();
  const end = () => {
    if (ended) return;
    ended = true;
    clearInterval(timer);
    unsubscribe?.();
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const close = () => {
          end();
          try {
            controller.close();
          } catch {
            // Already closed or cancelled.
          }
        };
        const push = (chunk: Uint8Array) => {
          if (ended) return;
          if ((controller.desiredSize ?? 0) <= -options.maxPendingChunks) {
            close();
            return;
          }
          lastSent = Date.now();
          controller.enqueue(chunk);
        };
        unsubscribe = options.subscribe(push);
        if (options.heartbeat) {
          const { everyMs, chunk } = options.heartbeat;
          timer = setInterval(() => {
            if (Date.now() - lastSent >= everyMs) push(chunk);
          }, everyMs);
          timer.unref?.();
        }
        if (options.signal.aborted) close();
        else options.signal.addEventListener("abort", close, { once: true });
      },
      cancel: end,
    },
    { highWaterMark: 0 },
  );
}
