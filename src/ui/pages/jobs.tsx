/** /ui/jobs: every job with its status and alloc counts; run a job from its file; stop one. */
import { useEffect, useRef, useState } from "preact/hooks";
import { send } from "../api/client.ts";
import { JobListSchema } from "../api/shapes.ts";
import { can } from "../acl/capabilities.ts";
import { ActionButton, deniedTitle, ErrorBanner, Loading, Section, StatusBadge, Table } from "../components/common.tsx";
import { JobSubmit } from "../components/job-submit.tsx";
import { SummaryBar } from "../components/summary-bar.tsx";
import { useAccess } from "../hooks/use-access.ts";
import { useWatch } from "../hooks/use-watch.ts";
import { ago } from "../format.ts";
import { paths } from "../router.ts";

export function JobsPage() {
  const { data: jobs, error } = useWatch("/v1/jobs", JobListSchema);
  const access = useAccess();
  const [submitting, setSubmitting] = useState(false);
  const [filter, setFilter] = useState("");
  const mayRun = can(access, "submit-job");
  const search = useRef<HTMLInputElement>(null);
  // "/" jumps to the filter, as in Nomad's UI (not while typing elsewhere).
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey || target?.closest("input, textarea, select, [contenteditable]")) return;
      event.preventDefault();
      search.current?.focus();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
  const needle = filter.trim().toLowerCase();
  const shown = jobs?.filter((job) => !needle || job.ID.toLowerCase().includes(needle) || (job.Name ?? "").toLowerCase().includes(needle));

  return (
    <>
      <div class="page-head">
        <h1>Jobs</h1>
        <button type="button" class="primary" aria-expanded={submitting} disabled={mayRun === false} title={mayRun === false ? deniedTitle("submit-job") : undefined} onClick={() => setSubmitting(!submitting)}>
          Run a job
        </button>
      </div>
      {submitting ? (
        <Section title="Run a job">
          <JobSubmit onDone={() => setSubmitting(false)} />
        </Section>
      ) : null}
      <ErrorBanner error={error} what="Listing jobs" />
      <Section
        title={jobs ? `${jobs.length} job${jobs.length === 1 ? "" : "s"}` : "Jobs"}
        actions={
          <label>
            <span class="visually-hidden">Filter jobs by name</span>
            <input ref={search} type="search" placeholder="Filter (press /)" value={filter} onInput={(event) => setFilter(event.currentTarget.value)} />
          </label>
        }
      >
        {!jobs || !shown ? (
          error ? null : <Loading what="jobs" />
        ) : jobs.length === 0 ? (
          <p class="muted">No jobs yet. Run one with the button above, or with `drover job run`.</p>
        ) : shown.length === 0 ? (
          <p class="muted">No job's name contains “{filter.trim()}”.</p>
        ) : (
          <Table class="jobs-table" columns={["Name", "Status", "Type", { label: "Priority", num: true }, "Allocations", "Submitted", { label: "Actions", hidden: true }]}>
            {shown.map((job) => (
              <tr key={job.ID} data-job={job.ID}>
                <td>
                  <a href={paths.job(job.ID)}>{job.Name || job.ID}</a>
                </td>
                <td>
                  <StatusBadge status={job.Status ?? ""} />
                </td>
                <td>{job.Type}</td>
                <td class="num">{job.Priority}</td>
                <td>
                  <SummaryBar summaries={Object.values(job.JobSummary?.Summary ?? {})} />
                </td>
                <td title={String(job.SubmitTime)}>{ago(job.SubmitTime)}</td>
                <td class="row-actions">
                  {job.Stop ? null : (
                    <ActionButton
                      label="Stop"
                      confirm="Confirm stop"
                      tone="danger"
                      capability="submit-job"
                      run={() => send(`/v1/job/${encodeURIComponent(job.ID)}`, { method: "DELETE" })}
                    />
                  )}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}
