/**
 * Whether anyone looks at this tab. A hidden tab stops its blocking queries,
 * streams and stats polling: a browser holds at most six connections to
 * one host, shared by every tab, and tabs nobody watches must not use them up.
 */
export function isVisible(): boolean {
  return document.visibilityState !== "hidden";
}

/** Resolves once the tab is visible (at once if it is), or when `signal` aborts. */
export function whenVisible(signal: AbortSignal): Promise<void> {
  if (isVisible() || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      document.removeEventListener("visibilitychange", check);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const check = () => {
      if (isVisible()) done();
    };
    document.addEventListener("visibilitychange", check);
    signal.addEventListener("abort", done);
  });
}

/** Waits `ms`, or less when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}
