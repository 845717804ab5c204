import { useEffect, useState } from "preact/hooks";
import type * as v from "valibot";
import { watch } from "../api/watch.ts";

export interface Watched<T> {
  data: T | undefined;
  error: Error | undefined;
}

/**
 * The live value of `path` (null: nothing to watch). The last good value
 * stays on screen while an error is shown beside it; a new path starts empty.
 */
export function useWatch<S extends v.GenericSchema>(path: string | null, schema: S): Watched<v.InferOutput<S>> {
  const [state, setState] = useState<Watched<v.InferOutput<S>>>({ data: undefined, error: undefined });
  useEffect(() => {
    setState({ data: undefined, error: undefined });
    if (path === null) return;
    const abort = new AbortController();
    void watch(path, schema, abort.signal, {
      value: (data) => setState({ data, error: undefined }),
      error: (error) => setState((previous) => ({ data: previous.data, error })),
    });
    return () => abort.abort();
  }, [path]);
  return state;
}
