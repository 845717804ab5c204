import { useEffect, useRef, useState } from "preact/hooks";
import type * as v from "valibot";
import { describeError, getJson } from "../api/client.ts";
import { pause, whenVisible } from "../api/visibility.ts";

/** Stats are sampled by the agent every second (telemetry.collection_interval's default); asking faster shows nothing new. */
const STATS_INTERVAL_MS = 1_000;
/** Points kept per series: five minutes at one a second, about what a chart's width can show. */
const MAX_POINTS = 300;

/** Column-major samples as uPlot takes them: times (seconds) first, then one array per series. */
export type Columns = number[][];

export interface Series {
  columns: Columns;
  /** Bumped on every new sample, so a chart knows to redraw. */
  version: number;
  error: string | undefined;
}

/**
 * Polls `path` every STATS_INTERVAL_MS while the tab is visible and keeps
 * the last MAX_POINTS samples; `pick` turns an answer into its time and
 * values (one per series, in order).
 */
export function useSeries<S extends v.GenericSchema>(
  path: string | null,
  schema: S,
  width: number,
  pick: (answer: v.InferOutput<S>) => { time: number; values: number[] } | undefined,
): Series {
  const columns = useRef<Columns>(emptyColumns(width));
  const [state, setState] = useState<{ version: number; error: string | undefined }>({ version: 0, error: undefined });
  const pickRef = useRef(pick);
  pickRef.current = pick;

  useEffect(() => {
    columns.current = emptyColumns(width);
    setState({ version: 0, error: undefined });
    if (path === null) return;
    const abort = new AbortController();
    void (async () => {
      while (!abort.signal.aborted) {
        await whenVisible(abort.signal);
        const started = Date.now();
        try {
          const sample = pickRef.current(await getJson(path, schema, abort.signal));
          if (sample) {
            append(columns.current, sample.time, sample.values);
            setState((previous) => ({ version: previous.version + 1, error: undefined }));
          }
        } catch (err) {
          if (abort.signal.aborted) return;
          setState((previous) => ({ version: previous.version, error: describeError(err) }));
        }
        await pause(Math.max(0, STATS_INTERVAL_MS - (Date.now() - started)), abort.signal);
      }
    })();
    return () => abort.abort();
  }, [path, width]);

  return { columns: columns.current, version: state.version, error: state.error };
}

function emptyColumns(width: number): Columns {
  return Array.from({ length: width + 1 }, () => []);
}

function append(columns: Columns, time: number, values: number[]): void {
  const times = columns[0]!;
  // The same sample twice (the agent had not sampled again yet) adds nothing.
  if (times.length > 0 && times[times.length - 1]! >= time) return;
  times.push(time);
  values.forEach((value, i) => columns[i + 1]?.push(value));
  if (times.length > MAX_POINTS) for (const column of columns) column.splice(0, column.length - MAX_POINTS);
}
