/**
 * What every server endpoint shares: Nomad's blocking queries (`?index=N`
 * waits until the data passes index N, at most `?wait=` long; the response
 * carries X-Nomad-Index), and the server's deliberate errors turned into
 * their HTTP status.
 */
import type { Context } from "hono";
import { parseDuration } from "../../lib/duration.ts";
import { ServerError, type ServerErrorKind } from "../../server/errors.ts";
import type { TableName } from "../../server/state/store.ts";
import { ApiError, badRequest } from "../errors.ts";
import { jsonText } from "../json-body.ts";

/** Nomad's default wait for a blocking query. */
export const DEFAULT_WAIT_MS = 5 * 60_000;
/** Nomad's cap on ?wait=: a longer wait would outlive most HTTP idle timeouts in between. */
export const MAX_WAIT_MS = 10 * 60_000;

export interface IndexedTables {
  tableIndex(...tables: TableName[]): number;
  waitForTables(tables: TableName[], minIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<void>;
}

const STATUS: Readonly<Record<ServerErrorKind, 400 | 403 | 404 | 409 | 500 | 503 | 507>> = {
  invalid: 400,
  denied: 403,
  "not-found": 404,
  conflict: 409,
  unavailable: 503,
  "storage-full": 507,
  refused: 500,
};

/** A ServerError as the ApiError with its status; anything else as it is. */
function asApiError(err: unknown): unknown {
  return err instanceof ServerError ? new ApiError(STATUS[err.kind], err.message) : err;
}

/** Runs a server call; its ServerError becomes an ApiError with the matching status. */
export function serverCall<T>(call: () => T): T {
  try {
    return call();
  } catch (err) {
    throw asApiError(err);
  }
}

/** serverCall for a call that settles later. */
export async function serverCallAsync<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw asApiError(err);
  }
}

function waitMs(text: string | undefined): number {
  if (text === undefined) return DEFAULT_WAIT_MS;
  try {
    return Math.min(parseDuration(text), MAX_WAIT_MS);
  } catch {
    throw badRequest(`invalid wait "${text}" (use a duration such as "30s" or "5m")`);
  }
}

/**
 * The wait of a blocking query: with `?index=N` (N > 0), `wait` until the
 * data passes N, at most `?wait=` long; without it, none.
 */
export async function awaitQueryIndex(c: Context, wait: (minIndex: number, timeoutMs: number, signal: AbortSignal) => Promise<void>): Promise<void> {
  const index = c.req.query("index");
  if (index === undefined) return;
  if (!/^\d+$/.test(index)) throw badRequest(`invalid index "${index}" (expected a non-negative integer)`);
  const minIndex = Number(index);
  if (minIndex > 0) await wait(minIndex, waitMs(c.req.query("wait")), c.req.raw.signal);
}

/**
 * Answers `read()` as JSON, after waiting for `tables` to pass `?index=`
 * when one is given (Nomad's blocking query).
 */
export async function blockingQuery(c: Context, server: IndexedTables, tables: TableName[], read: () => unknown): Promise<Response> {
  await awaitQueryIndex(c, (minIndex, timeoutMs, signal) => server.waitForTables(tables, minIndex, timeoutMs, signal));
  const body = serverCall(read);
  // Nomad never reports index 0: a client would then block on ?index=0 forever.
  c.header("X-Nomad-Index", String(Math.max(1, server.tableIndex(...tables))));
  c.header("X-Nomad-KnownLeader", "true");
  c.header("X-Nomad-LastContact", "0");
  return c.body(jsonText(body), 200, { "Content-Type": "application/json" });
}
