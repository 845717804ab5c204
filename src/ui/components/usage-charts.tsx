/** One owner's (the host's, an alloc's, a task's) CPU and memory charts side by side: use, and the limit it is held to. */
import type { Series } from "../hooks/use-series.ts";
import { bytes, mhz } from "../format.ts";
import { Chart, type ChartSeries } from "./chart.tsx";

/** Each owner's columns in a Series, in this order: CPU used, CPU limit, memory used, memory limit. */
export const USAGE_COLUMNS = 4;

export interface UsageLines {
  cpu: ChartSeries[];
  memory: ChartSeries[];
}

/** A sample's time for the time axis, in seconds: the agent's (nanoseconds), or now where it sent none. */
export function sampleTime(nanos: number | undefined): number {
  return nanos ? nanos / 1e9 : Date.now() / 1000;
}

/** The legends' lines, the limits named as the page calls them ("reserved" for an alloc, "capacity" for the host). */
export function usageLines(cpuLimit: string, memoryLimit: string): UsageLines {
  return {
    cpu: [
      { label: "used", color: "--series-cpu" },
      { label: cpuLimit, color: "--series-reserved", reference: true },
    ],
    memory: [
      { label: "used", color: "--series-memory" },
      { label: memoryLimit, color: "--series-reserved", reference: true },
    ],
  };
}

/** The pair for the `index`th owner in `series`. */
export function UsagePair({ owner, series, index, lines }: { owner: string; series: Series; index: number; lines: UsageLines }) {
  const { columns, version, error } = series;
  const first = 1 + index * USAGE_COLUMNS;
  return (
    <div class="chart-pair" data-chart-owner={owner}>
      <Chart title={`${owner}: CPU`} series={lines.cpu} columns={[columns[0]!, columns[first]!, columns[first + 1]!]} version={version} format={mhz} error={error} />
      <Chart title={`${owner}: memory`} series={lines.memory} columns={[columns[0]!, columns[first + 2]!, columns[first + 3]!]} version={version} format={bytes} binary error={error} />
    </div>
  );
}
