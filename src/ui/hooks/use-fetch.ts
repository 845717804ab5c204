import { useEffect, useState } from "preact/hooks";
import type * as v from "valibot";
import { getJson } from "../api/client.ts";

/**
 * `path` read once, and again whenever `key` changes: for what a page
 * needs fresh only when something it already watches moved (a job's
 * versions when its version changes), so it holds no connection open.
 */
export function useFetch<S extends v.GenericSchema>(path: string | null, schema: S, key: unknown): { data: v.InferOutput<S> | undefined; error: Error | undefined } {
  const [state, setState] = useState<{ data: v.InferOutput<S> | undefined; error: Error | undefined }>({ data: undefined, error: undefined });
  useEffect(() => {
    if (path === null) return;
    const abort = new AbortController();
    getJson(path, schema, abort.signal).then(
      (data) => setState({ data, error: undefined }),
      (error: Error) => !abort.signal.aborted && setState((previous) => ({ data: previous.data, error })),
    );
    return () => abort.abort();
  }, [path, JSON.stringify(key)]);
  return state;
}
