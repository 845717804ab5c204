/**
 * A command's output as an error message quotes it. A failing tool can print
 * megabytes (a CNI plugin dumping its state); all of it would go into the
 * alloc's setup-failure event, the agent's log and the state database. The
 * end is kept, where the reason usually is.
 */

/** What an error message keeps of one output. */
export const OUTPUT_TAIL_BYTES = 4096;

const decoder = new TextDecoder();

/** `tail` (the last bytes of an output) with how many bytes before it were cut, as an error quotes it. */
export function describeTail(tail: Uint8Array, cutBytes: number): string {
  const text = decoder.decode(tail);
  return cutBytes > 0 ? `[${cutBytes} bytes cut] ${text}` : text;
}

/** `text` whole when it is at most `limit` bytes, else its last `limit` bytes, saying how many were cut. */
export function outputTail(text: string, limit = OUTPUT_TAIL_BYTES): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= limit) return text;
  return describeTail(bytes.subarray(bytes.length - limit), bytes.length - limit);
}
