/** runtime/fd-stream.ts on Bun: Bun.file(fd).stream() reads without blocking the event loop. */
import type { ReadDescriptor } from "../fd-stream.ts";

export const readDescriptor: ReadDescriptor = async (fd, onChunk, stop) => {
  const reader = Bun.file(fd).stream().getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  if (stop.aborted) cancel();
  else stop.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || stop.aborted) return;
      await onChunk(value);
    }
  } catch (err) {
    if ((err as { code?: string }).code !== "EIO") throw err;
  } finally {
    stop.removeEventListener("abort", cancel);
  }
};
