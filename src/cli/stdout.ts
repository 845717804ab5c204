/**
 * The CLI's stdout, and when it has all left the process. Bun queues what a
 * full pipe will not take (`drover job status | less` past 64 KiB) and
 * process.exit drops that queue, so a command waits for it first.
 */
let draining: Promise<void> | null = null;

export function writeStdout(chunk: string | Uint8Array): void {
  // A write that was queued is followed by one "drain", once the whole queue is out;
  // later writes before it join the same wait (one listener, however many writes).
  if (!process.stdout.write(chunk) && !draining) {
    draining = new Promise((resolve) =>
      process.stdout.once("drain", () => {
        draining = null;
        resolve();
      }),
    );
  }
}

/** Settles once everything given to writeStdout has been written out. */
export const stdoutWritten = (): Promise<void> => draining ?? Promise.resolve();
