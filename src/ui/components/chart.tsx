/**
 * A live line chart (uPlot) of a few series over time, with the
 * reservation drawn beside the use as a dashed line. Its box has a fixed
 * height from the first paint, so nothing below it moves when it draws.
 */
import uPlot from "uplot";
import { useEffect, useRef, useState } from "preact/hooks";
import type { Columns } from "../hooks/use-series.ts";
import { useColorScheme } from "../hooks/use-color-scheme.ts";

/** The plot's height in CSS pixels (the stylesheet's .chart-plot has the same). */
const CHART_HEIGHT = 140;
/** The narrowest time window drawn, in seconds. */
const MIN_WINDOW_S = 60;
/** Tick steps for bytes: powers of two, so the axis reads 32 MiB, 64 MiB rather than 47.7 MiB. */
const BINARY_STEPS = Array.from({ length: 50 }, (_, i) => 2 ** i);

export interface ChartSeries {
  label: string;
  /** A CSS variable name, e.g. "--series-1". */
  color: string;
  /** Drawn dashed, without fill: a limit or reservation rather than a use. */
  reference?: boolean;
}

export interface ChartProps {
  title: string;
  series: ChartSeries[];
  columns: Columns;
  version: number;
  format: (value: number) => string;
  /** Ticks at powers of two (sizes in bytes). */
  binary?: boolean;
  error?: string | undefined;
}

/**
 * The time axis's span: the samples, widened on the left to MIN_WINDOW_S (a
 * single sample, or none, included), so it ticks in seconds, not milliseconds.
 */
function timeWindow(min: number | null, max: number | null): [number, number] {
  const end = typeof max === "number" && Number.isFinite(max) ? max : Date.now() / 1000;
  const start = typeof min === "number" && Number.isFinite(min) ? min : end;
  return [Math.min(start, end - MIN_WINDOW_S), end];
}

/**
 * Sets the time axis to the samples' window. uPlot's own fitting pads a
 * lone sample by years, and skips the range option then: set it outright.
 */
function fitTime(plot: uPlot, columns: Columns): void {
  const times = columns[0] ?? [];
  const [min, max] = timeWindow(times[0] ?? null, times[times.length - 1] ?? null);
  plot.setScale("x", { min, max });
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || "#888";
}

export function Chart({ title, series, columns, version, format, binary = false, error }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const scheme = useColorScheme();
  const [width, setWidth] = useState(0);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setWidth(Math.floor(element.clientWidth)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    const element = box.current;
    if (!element || width === 0) return;
    const axisColor = cssVar("--muted");
    const gridColor = cssVar("--grid");
    const options: uPlot.Options = {
      width,
      height: CHART_HEIGHT,
      legend: { show: false },
      cursor: { drag: { x: false, y: false }, points: { show: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.15 : 1] } },
      axes: [
        { stroke: axisColor, grid: { stroke: gridColor, width: 1 }, ticks: { stroke: gridColor, width: 1 } },
        {
          stroke: axisColor,
          grid: { stroke: gridColor, width: 1 },
          ticks: { stroke: gridColor, width: 1 },
          size: 84,
          values: (_u, values) => values.map(format),
          ...(binary ? { incrs: BINARY_STEPS } : {}),
        },
      ],
      series: [
        {},
        ...series.map((s) => {
          const color = cssVar(s.color);
          return s.reference
            ? { label: s.label, stroke: color, width: 1.5, dash: [6, 4], points: { show: false } }
            : { label: s.label, stroke: color, width: 2, fill: `${color}33`, points: { show: false } };
        }),
      ],
    };
    plot.current = new uPlot(options, columns as uPlot.AlignedData, element);
    fitTime(plot.current, columns);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [width, scheme, series.length]);

  useEffect(() => {
    if (!plot.current) return;
    plot.current.setData(columns as uPlot.AlignedData);
    fitTime(plot.current, columns);
  }, [version]);

  const points = columns[0]?.length ?? 0;
  return (
    <figure class="chart" data-points={points}>
      <figcaption>
        <span class="chart-title">{title}</span>
        <span class="chart-legend">
          {series.map((s, i) => {
            const values = columns[i + 1] ?? [];
            const last = values[values.length - 1];
            return (
              <span class="legend-item" key={s.label}>
                <span class={s.reference ? "swatch swatch-dashed" : "swatch"} style={{ borderColor: `var(${s.color})` }} />
                {s.label} <b>{last === undefined ? "…" : format(last)}</b>
              </span>
            );
          })}
        </span>
      </figcaption>
      <div class="chart-plot" ref={box} role="img" aria-label={`${title} over the last minutes`} />
      {error ? <p class="chart-error">{error}</p> : null}
    </figure>
  );
}
