/**
 * Leaf schemas every struct shares: Nomad's integers, nanosecond durations,
 * string maps and time stamps, so each rule is written once.
 */
import * as v from "valibot";
import { NS_PER_MS } from "../lib/units.ts";

export const Int = v.pipe(v.number(), v.integer());
export const NonNegativeInt = v.pipe(v.number(), v.integer(), v.minValue(0));

/** A duration in nanoseconds, as Nomad's JSON carries every time.Duration. */
export const Nanoseconds = NonNegativeInt;

/** A point in time in nanoseconds since the epoch (Nomad's CreateTime, SubmitTime, TaskEvent.Time). */
export const UnixNanos = v.number();

/** A Go time.Time in RFC 3339, or null for Go's zero time. */
export const Timestamp = v.nullable(v.string());

/** A JSON object of strings; an array (which valibot's record would take by its indexes) is refused. */
export const StringMap = v.pipe(
  v.custom<Record<string, string>>((input) => typeof input === "object" && input !== null && !Array.isArray(input), "expected an object of strings"),
  v.record(v.string(), v.string()),
);

/** Now, in Nomad's nanoseconds since the epoch. */
export function nowNanos(): number {
  return Date.now() * NS_PER_MS;
}

/** Nanoseconds since the epoch as RFC 3339 (Go's time.Time in JSON), to the millisecond. */
export function isoOfNanos(ns: number): string {
  return new Date(Math.floor(ns / NS_PER_MS)).toISOString();
}

/** Go's strconv.ParseBool spellings, which Nomad's query parameters accept (?purge=1, ?follow=T). */
const GO_TRUE = ["1", "t", "T", "TRUE", "true", "True"] as const;
const GO_FALSE = ["0", "f", "F", "FALSE", "false", "False"] as const;
export const GoBool = v.pipe(
  v.picklist([...GO_TRUE, ...GO_FALSE], "must be true or false"),
  v.transform((text) => (GO_TRUE as readonly string[]).includes(text)),
);
