/** A group's (or a job's) alloc counts by state, as a bar and as numbers; the bar has a fixed size, filled as counts arrive. */
import type { GroupSummary } from "../api/shapes.ts";

const STATES = ["Running", "Starting", "Queued", "Failed", "Lost", "Complete"] as const;

function totals(summaries: GroupSummary[]): Record<(typeof STATES)[number], number> {
  const sum = { Running: 0, Starting: 0, Queued: 0, Failed: 0, Lost: 0, Complete: 0 };
  for (const group of summaries) for (const state of STATES) sum[state] += group[state] ?? 0;
  return sum;
}

export function SummaryBar({ summaries }: { summaries: GroupSummary[] }) {
  const sum = totals(summaries);
  const all = STATES.reduce((total, state) => total + sum[state], 0);
  const label = STATES.filter((state) => sum[state] > 0)
    .map((state) => `${sum[state]} ${state.toLowerCase()}`)
    .join(", ");
  return (
    <span class="summary" title={label || "no allocations"}>
      <span class="summary-bar" aria-hidden="true">
        {STATES.map((state) => (sum[state] > 0 ? <span key={state} class={`seg seg-${state.toLowerCase()}`} style={{ flexGrow: sum[state] }} /> : null))}
        {all === 0 ? <span class="seg seg-empty" style={{ flexGrow: 1 }} /> : null}
      </span>
      <span class="summary-text">{label || "none"}</span>
    </span>
  );
}
