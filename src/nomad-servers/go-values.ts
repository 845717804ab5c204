/**
 * Go values as Nomad's msgpack carries them, read into and written from
 * drover's shapes with the valibot schema as the guide:
 *
 *   fromGo(schema, value)  keeps the fields the schema names and drops the
 *     rest (a Nomad server sends every field of its structs), gives a nil or
 *     missing field Go's zero value for the schema's type (nil map -> {},
 *     nil slice -> [], "" / 0 / false), decodes raw string bytes as UTF-8,
 *     and reads a time.Time (15 bytes) where the schema is a Timestamp.
 *   toGo(schema, value)    writes Timestamps as time.Time bytes; everything
 *     else goes as it is (field names are already Go's).
 *
 * The schemas are read with the job schemas' own walker (structs/schema-walk.ts:
 * nullable and pipes peeled off). The result of fromGo still has to pass the
 * schema: it only bridges the encodings, it never invents a value Go did not
 * send.
 */
import type * as v from "valibot";
import { describe, zeroFill } from "../structs/schema-walk.ts";
import { Timestamp } from "../structs/common.ts";

const TIMESTAMP: v.GenericSchema = Timestamp;
const text = new TextDecoder();

/** Seconds from Go's zero time (January 1, year 1, UTC) to the Unix epoch. */
const GO_EPOCH_OFFSET_S = 62_135_596_800n;
/** time.MarshalBinary's version 1 layout: version, int64 seconds, int32 nanoseconds, int16 zone offset in minutes. */
const GO_TIME_BYTES = 15;
const GO_TIME_VERSION = 1;
/** The zone offset Go writes for UTC. */
const GO_TIME_UTC = -1;

/** A Go time.Time in its binary form, or null for Go's zero time. */
export function goTimeToIso(bytes: Uint8Array): string | null {
  if (bytes.length < GO_TIME_BYTES || bytes[0] !== GO_TIME_VERSION) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const seconds = view.getBigInt64(1);
  const nanos = view.getInt32(9);
  if (seconds === 0n && nanos === 0) return null;
  const ms = Number(seconds - GO_EPOCH_OFFSET_S) * 1000 + Math.floor(nanos / 1e6);
  return new Date(ms).toISOString();
}

/** An RFC 3339 time (or null, Go's zero time) as time.MarshalBinary writes it, in UTC. */
export function isoToGoTime(iso: string | null): Uint8Array {
  const bytes = new Uint8Array(GO_TIME_BYTES);
  const view = new DataView(bytes.buffer);
  bytes[0] = GO_TIME_VERSION;
  view.setInt16(13, GO_TIME_UTC);
  if (iso === null) return bytes;
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not a time: "${iso}"`);
  const seconds = BigInt(Math.floor(ms / 1000)) + GO_EPOCH_OFFSET_S;
  view.setBigInt64(1, seconds);
  view.setInt32(9, (ms % 1000) * 1e6);
  return bytes;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);
}

/** Raw msgpack strings anywhere in an untyped value, as JS strings. */
export function goStrings(value: unknown): unknown {
  if (value instanceof Uint8Array) return text.decode(value);
  if (Array.isArray(value)) return value.map(goStrings);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, goStrings(item)]));
  return value;
}

/** What a walk along a schema does where the schema alone decides (a time, a nil); GO_ON to walk on. */
const GO_ON = Symbol("go on");

interface Walk {
  at(schema: v.GenericSchema, value: unknown): unknown;
  /** A value below which the schema says nothing more (a string, a number, a free-form value). */
  leaf(value: unknown): unknown;
  /** Keep an object's fields the schema does not name. */
  keepUnknown: boolean;
}

/** `value` rebuilt along `schema` (nullable and pipes peeled off by the job schemas' walker). */
function along(schema: v.GenericSchema, value: unknown, walk: Walk): unknown {
  const decided = walk.at(schema, value);
  if (decided !== GO_ON) return decided;
  const { shape } = describe(schema);
  switch (shape.kind) {
    case "object": {
      if (!isRecord(value)) return value;
      const out: Record<string, unknown> = walk.keepUnknown ? { ...value } : {};
      for (const [key, entry] of Object.entries(shape.entries)) if (key in value) out[key] = along(entry, value[key], walk);
      return out;
    }
    case "array":
      return Array.isArray(value) ? value.map((item) => along(shape.item, item, walk)) : value;
    case "record":
      return isRecord(value) ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, along(shape.value, item, walk)])) : value;
    default:
      return walk.leaf(value);
  }
}

/** Only the fields the schema names, raw strings decoded and times read; nil stays nil. */
const FROM_GO: Walk = {
  at(schema, value) {
    if (schema === TIMESTAMP) return value instanceof Uint8Array ? goTimeToIso(value) : null;
    // drover keeps no value where its schema is v.null() (per-task networks, placement scores).
    if (schema.type === "null" || value === null || value === undefined) return null;
    return GO_ON;
  },
  leaf: goStrings,
  keepUnknown: false,
};

/** Times as Go's binary form; everything else as it is. */
const TO_GO: Walk = {
  at(schema, value) {
    if (schema === TIMESTAMP) return isoToGoTime(typeof value === "string" ? value : null);
    return value === null || value === undefined ? value : GO_ON;
  },
  leaf: (value) => value,
  keepUnknown: true,
};

/** Nil and missing fields then take Go's zero value, as the job schemas' own zeroFill gives it. */
export function fromGo(schema: v.GenericSchema, value: unknown): unknown {
  return zeroFill(schema, along(schema, value, FROM_GO) ?? {});
}

export function toGo(schema: v.GenericSchema, value: unknown): unknown {
  return along(schema, value, TO_GO);
}
