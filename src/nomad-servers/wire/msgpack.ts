/**
 * Values as Nomad's msgpack handle (structs.MsgpackHandle, go-msgpack) writes
 * and reads them:
 *
 *   - strings and []byte are both msgpack str: decoded here as raw bytes
 *     (Uint8Array), since a time.Time travels as a 15-byte binary string that
 *     UTF-8 decoding would mangle; map keys stay JS strings. go-values.ts turns
 *     the bytes into strings or times by the schema they are read against.
 *   - integers above 32 bits must go out as int64/uint64: Go refuses a float
 *     for an integer field, and the library would write an unsafe integer
 *     (nanosecond timestamps) as float64. Such numbers are sent as BigInt.
 *   - nil maps, slices and pointers are msgpack nil; undefined fields are
 *     left out (Go keeps its zero value for a missing key).
 */
import { Decoder, Encoder } from "@msgpack/msgpack";

const encoder = new Encoder({ useBigInt64: true, ignoreUndefined: true });
/** int64 values decode as numbers: the integers Nomad sends (indexes, nanoseconds) fit a double closely enough. */
const decoderOptions = { rawStrings: true, useBigInt64: false } as const;

const INT32_MIN = -0x8000_0000;
const UINT32_MAX = 0xffff_ffff;

/** Integral numbers outside 32 bits become BigInt, so they are written as Go's int64/uint64. */
function widen(value: unknown): unknown {
  if (typeof value === "number") {
    return Number.isInteger(value) && (value > UINT32_MAX || value < INT32_MIN) ? BigInt(value) : value;
  }
  if (value === null || typeof value !== "object" || value instanceof Uint8Array) return value;
  if (Array.isArray(value)) return value.map(widen);
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = widen(item);
  return out;
}

export function encodeGo(value: unknown): Uint8Array {
  return encoder.encode(widen(value));
}

/** Decodes back-to-back values from a byte stream, one at a time (net/rpc frames have no length prefix). */
export function decodeGoStream(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<unknown, void, unknown> {
  return new Decoder(decoderOptions).decodeStream(chunks);
}

export function decodeGo(bytes: Uint8Array): unknown {
  return new Decoder(decoderOptions).decode(bytes);
}
