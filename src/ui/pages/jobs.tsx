/** /ui/jobs: every job of a namespace (or all) with its status and alloc counts; run a job from its file; stop one. */
import { useEffect, useRef, useState } from "preact/hooks";
import { inNamespace, send } from "../api/client.ts";
import { JobListSchema } from "../api/shapes.ts";
import { can } from "../acl/capabilities.ts";
import { ActionButton, deniedTitle, ErrorBanner, InNamespace, Loading, Section, StatusBadge, Table } from "../components/common.tsx";
import { JobSubmit } from "../components/job-submit.tsx";
import { NamespaceSelect } from "../components/namespace-select.tsx";
import { SummaryBar } from "../components/summary-bar.tsx";
import { useAccess } from "../hooks/use-access.ts";
import { useWatch } from "../hooks/use-watch.ts";
import { ago } from "../format.ts";
import { ALL_NAMESPACES, paths } from "../router.ts";

export function JobsPage({ namespace }: { namespace: string }) {
  const { data: jobs, error } = useWatch(inNamespace("/v1/jobs", namespace), JobListSchema);
  const all = namespace === ALL_NAMESPACES;
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
          <JobSubmit namespace={all ? undefined : namespace} onDone={() => setSubmitting(false)} />
        </Section>
      ) : null}
      <ErrorBanner error={error} what="Listing jobs" />
      <Section
        title={jobs ? `${jobs.length} job${jobs.length === 1 ? "" : "s"}` : "Jobs"}
        actions={
          <>
            <NamespaceSelect current={namespace} />
            <label>
            <span class="visually-hidden">Filter jobs by name</span>
            <input ref={search} type="search" placeholder="Filter (press /)" value={filter} onInput={(event) => setFilter(event.currentTarget.value)} />
            </label>
          </>
        }
      >
        {!jobs || !shown ? (
          error ? null : <Loading what="jobs" />
        ) : jobs.length === 0 ? (
          <p class="muted">{all ? "No jobs yet" : `No jobs in namespace “${namespace}”`}. Run one with the button above, or with `drover job run`.</p>
        ) : shown.length === 0 ? (
          <p class="muted">No job's name contains “{filter.trim()}”.</p>
        ) : (
          <Table class="jobs-table" columns={["Name", ...(all ? ["Namespace"] : []), "Status", "Type", { label: "Priority", num: true }, "Allocations", "Submitted", { label: "Actions", hidden: true }]}>
            {shown.map((job) => (
              <tr key={job.ID} data-job={job.ID} data-namespace={job.Namespace}>
                <td>
                  <a href={paths.job(job.ID, job.Namespace)}>{job.Name || job.ID}</a>
                </td>
                {all ? <td>{job.Namespace}</td> : null}
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
                    <InNamespace namespace={job.Namespace}>
                      <ActionButton
                      label="Stop"
                      confirm="Confirm stop"
                      tone="danger"
                      capability="submit-job"
                      run={() => send(inNamespace(`/v1/job/${encodeURIComponent(job.ID)}`, job.Namespace), { method: "DELETE" })}
                      />
                    </InNamespace>
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
