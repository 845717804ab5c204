/**
 * The CLI's stdout, and when it has all left the process. Bun queues what a
 * full pipe will not take (`drover job status | less` past 64 KiB) and
 * process.exit drops that queue, so a command waits for it first.
 */
let written: Promise<void> = Promise.resolve();

export function writeStdout(chunk: string | Uint8Array): void {
  // Only a write that was queued is followed by "drain"; it comes once the queue is empty.
  if (!process.stdout.write(chunk)) written = new Promise((resolve) => process.stdout.once("drain", () => resolve()));
}

/** Settles once everything given to writeStdout has been written out. */
export const stdoutWritten = (): Promise<void> => written;
