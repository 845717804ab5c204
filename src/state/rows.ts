/**
 * Reading a stored row back: every JSON body is checked against the schema
 * of what was written, so a row this binary cannot use stops start-up with
 * a message naming the row and the field, instead of failing somewhere later.
 */
import * as v from "valibot";
import { StateDbError } from "./migrate.ts";

/** Which database a row came from, for the message: "server" or "client". */
export type StateDbName = "server" | "client";

export function parseStoredValue<S extends v.GenericSchema>(db: StateDbName, schema: S, value: unknown, what: string): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (!result.success) {
    const issue = result.issues[0];
    throw new StateDbError(
      `${db} state: ${what} does not match this drover's schema (${v.getDotPath(issue) ?? ""}: ${issue.message}); ` +
        `move the ${db} state database aside to start empty`,
    );
  }
  return result.output;
}

/** `complete`, when given, brings a row written by an older drover up to the schema (fields added since) before the check. */
export function parseStoredJson<S extends v.GenericSchema>(
  db: StateDbName,
  schema: S,
  body: string,
  what: string,
  complete: (value: unknown) => unknown = (value) => value,
): v.InferOutput<S> {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new StateDbError(`${db} state: ${what} is not valid JSON; move the ${db} state database aside to start empty`);
  }
  return parseStoredValue(db, schema, complete(value), what);
}
