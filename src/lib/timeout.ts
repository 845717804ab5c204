/**
 * `promise`, or a rejection with `onTimeout()`'s error once `ms` have passed
 * first. The timer is cleared either way, so a settled wait never keeps the
 * process alive or fires late.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

class NotSettled extends Error {}

/** Whether `promise` settles, either way, within `ms`: for waits whose outcome is all that matters. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  try {
    await withTimeout(promise, ms, () => new NotSettled());
    return true;
  } catch (err) {
    return !(err instanceof NotSettled);
  }
}

/** Waits `ms`, or less when `signal` aborts first; never rejects. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}
