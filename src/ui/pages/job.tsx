/** /ui/jobs/<id>[@<namespace>]: a job's status, groups, placement failures, allocations and versions; stop it. */
import { useEffect } from "preact/hooks";
import { ApiError, getJson, inNamespace, send } from "../api/client.ts";
import { AllocListSchema, JobListSchema, EvaluationListSchema, JobSchema, JobSummarySchema, JobVersionsSchema, LatestDeploymentSchema, type Deployment, type Evaluation } from "../api/shapes.ts";
import { ActionButton, ErrorBanner, KeyValues, Loading, Section, StatusBadge, Table } from "../components/common.tsx";
import { AllocTable } from "../components/alloc-table.tsx";
import { SummaryBar } from "../components/summary-bar.tsx";
import { useFetch } from "../hooks/use-fetch.ts";
import { useWatch } from "../hooks/use-watch.ts";
import { ago, dateTime, shortId } from "../format.ts";
import { ALL_NAMESPACES, navigate, paths } from "../router.ts";

/** Why an evaluation could not place a group's allocs, in Nomad's words (`nomad job status`'s "Placement Failure"). */
function failureLines(evaluation: Evaluation): { group: string; lines: string[] }[] {
  return Object.entries(evaluation.FailedTGAllocs ?? {}).map(([group, metric]) => {
    const lines: string[] = [];
    if (metric.CoalescedFailures > 0) lines.push(`${metric.CoalescedFailures + 1} unplaced`);
    for (const [what, count] of Object.entries(metric.ClassFiltered ?? {})) lines.push(`Class "${what}" filtered ${count} nodes`);
    for (const [what, count] of Object.entries(metric.ConstraintFiltered ?? {})) lines.push(`Constraint "${what}" filtered ${count} nodes`);
    for (const [what, count] of Object.entries(metric.DimensionExhausted ?? {})) lines.push(`Dimension "${what}" exhausted on ${count} nodes`);
    if (metric.NodesEvaluated === 0) lines.push("No nodes were eligible for evaluation");
    return { group, lines };
  });
}

/** The job's latest deployment: each group's progress; promote waiting canaries, or fail it. */
function DeploymentSection({ deployment, namespace }: { deployment: Deployment; namespace: string }) {
  const base = `/v1/deployment`;
  const running = deployment.Status === "running" || deployment.Status === "paused";
  const waitingCanaries = Object.values(deployment.TaskGroups).some((group) => (group.DesiredCanaries ?? 0) > 0 && !group.Promoted);
  return (
    <Section
      title="Latest deployment"
      id="deployment"
      actions={
        running ? (
          <>
            {waitingCanaries ? (
              <ActionButton label="Promote" capability="submit-job" run={() => send(inNamespace(`${base}/promote/${deployment.ID}`, namespace), { method: "PUT", body: { DeploymentID: deployment.ID, All: true } })} />
            ) : null}
            <ActionButton label="Fail" confirm="Confirm fail" tone="danger" capability="submit-job" run={() => send(inNamespace(`${base}/fail/${deployment.ID}`, namespace), { method: "PUT", body: { DeploymentID: deployment.ID } })} />
          </>
        ) : null
      }
    >
      <p>
        <StatusBadge status={deployment.Status ?? ""} /> <span class="mono">{shortId(deployment.ID)}</span> · version {deployment.JobVersion} ·{" "}
        <span class="muted">{deployment.StatusDescription}</span>
      </p>
      <Table columns={["Group", { label: "Desired", num: true }, { label: "Canaries", num: true }, { label: "Placed", num: true }, { label: "Healthy", num: true }, { label: "Unhealthy", num: true }, "Promoted"]}>
        {Object.entries(deployment.TaskGroups).map(([group, state]) => (
          <tr key={group} data-deployment-group={group}>
            <td>{group}</td>
            <td class="num">{state.DesiredTotal}</td>
            <td class="num">{state.DesiredCanaries}</td>
            <td class="num">{state.PlacedAllocs}</td>
            <td class="num">{state.HealthyAllocs}</td>
            <td class="num">{state.UnhealthyAllocs}</td>
            <td>{(state.DesiredCanaries ?? 0) === 0 ? "—" : state.Promoted ? "yes" : state.AutoPromote ? "automatically" : "no"}</td>
          </tr>
        ))}
      </Table>
    </Section>
  );
}

/**
 * A link that names no namespace, or another one (an old bookmark, a job
 * moved), to a job that is not there: drover keeps job IDs unique across
 * namespaces, so the job is looked for in all of them and its page opened.
 */
function useFindJobElsewhere(id: string, namespace: string, error: Error | undefined): void {
  const missing = error instanceof ApiError && error.status === 404;
  useEffect(() => {
    if (!missing) return;
    const abort = new AbortController();
    getJson(inNamespace(`/v1/jobs?prefix=${encodeURIComponent(id)}`, ALL_NAMESPACES), JobListSchema, abort.signal).then(
      (jobs) => {
        const found = jobs.find((job) => job.ID === id && job.Namespace !== namespace);
        if (found && !abort.signal.aborted) navigate(paths.job(id, found.Namespace), true);
      },
      // Not found anywhere, or not allowed to look: the page's own error stays.
      () => undefined,
    );
    return () => abort.abort();
  }, [missing]);
}

export function JobPage({ id, namespace }: { id: string; namespace: string }) {
  /** A route of the job, asked in its namespace (the job routes look only there). */
  const at = (suffix = "") => inNamespace(`/v1/job/${encodeURIComponent(id)}${suffix}`, namespace);
  const { data: job, error } = useWatch(at(), JobSchema);
  useFindJobElsewhere(id, namespace, error);
  const { data: summary } = useWatch(at("/summary"), JobSummarySchema);
  const { data: allocs, error: allocsError } = useWatch(at("/allocations?all=true"), AllocListSchema);
  const queued = Object.values(summary?.Summary ?? {}).reduce((sum, group) => sum + (group.Queued ?? 0), 0);
  const { data: evaluations } = useFetch(at("/evaluations"), EvaluationListSchema, [job?.Version, job?.Status, queued]);
  const { data: versions } = useFetch(at("/versions?diffs=true"), JobVersionsSchema, [job?.Version, job?.Stop]);
  // A deployment moves as its allocs do: read it again whenever they change, holding no connection of its own.
  const allocsKey = allocs?.map((alloc) => `${alloc.ID}:${alloc.ModifyIndex}`).join();
  const { data: deployment } = useFetch(at("/deployment"), LatestDeploymentSchema, [job?.Version, allocsKey]);
  const failures = queued > 0 ? (evaluations ?? []).filter((evaluation) => evaluation.Status === "blocked" || Object.keys(evaluation.FailedTGAllocs ?? {}).length > 0).slice(0, 1) : [];

  return (
    <>
      <div class="page-head">
        <h1>
          <span class="crumb">Job</span> {job?.Name || id}
        </h1>
        {job ? <StatusBadge status={job.Status ?? ""} /> : null}
        <div class="grow" />
        {job && !job.Stop ? (
          <ActionButton label="Stop job" confirm="Confirm stop" tone="danger" capability="submit-job" run={() => send(at(), { method: "DELETE" })} />
        ) : null}
        {job?.Stop ? (
          <ActionButton label="Start job" capability="submit-job" run={() => send(inNamespace("/v1/jobs", namespace), { method: "POST", body: { Job: { ...job, Stop: false } } })} />
        ) : null}
      </div>
      <ErrorBanner error={error} what="Reading the job" />
      {!job ? (
        error ? null : <Loading what="the job" />
      ) : (
        <>
          <Section title="Overview">
            <KeyValues
              items={[
                ["Namespace", <a href={paths.jobs(job.Namespace || namespace)}>{job.Namespace || namespace}</a>],
                ["Type", job.Type],
                ["Priority", job.Priority],
                ["Version", job.Version],
                ["Datacenters", job.Datacenters.join(", ")],
                ["Submitted", dateTime(job.SubmitTime)],
                ["Status", job.StatusDescription || job.Status],
              ]}
            />
          </Section>
          <Section title="Task groups">
            <Table columns={["Group", { label: "Count", num: true }, "Tasks", "Allocations"]}>
              {job.TaskGroups.map((group) => {
                const groupSummary = summary?.Summary[group.Name];
                return (
                  <tr key={group.Name}>
                    <td>{group.Name}</td>
                    <td class="num">{group.Count}</td>
                    <td>{group.Tasks.map((task) => `${task.Name} (${task.Driver})`).join(", ")}</td>
                    <td>{groupSummary ? <SummaryBar summaries={[groupSummary]} /> : "…"}</td>
                  </tr>
                );
              })}
            </Table>
          </Section>
          {failures.length > 0 ? (
            <Section title="Placement failures" id="placement-failures">
              {failures.flatMap((evaluation) =>
                failureLines(evaluation).map(({ group, lines }) => (
                  <div class="failure" key={`${evaluation.ID}-${group}`}>
                    <h3>Task group “{group}” (failed to place {evaluation.QueuedAllocations?.[group] ?? queued} allocation{queued === 1 ? "" : "s"})</h3>
                    <ul>
                      {lines.map((line) => (
                        <li key={line}>{line}</li>
                      ))}
                    </ul>
                  </div>
                )),
              )}
            </Section>
          ) : null}
        </>
      )}
      {deployment ? <DeploymentSection deployment={deployment} namespace={namespace} /> : null}
      <Section title={allocs ? `Allocations (${allocs.length})` : "Allocations"} id="allocations">
        <ErrorBanner error={allocsError} />
        {allocs ? <AllocTable allocs={allocs} /> : allocsError ? null : <Loading what="allocations" />}
      </Section>
      <Section title="Versions" id="versions">
        {!versions ? (
          <Loading what="versions" />
        ) : (
          <ol class="versions">
            {versions.Versions.map((version, i) => {
              const diff = versions.Diffs[i];
              const changes = diff ? diff.Fields.length + diff.TaskGroups.filter((group) => group.Type !== "None").length : 0;
              return (
                <li key={version.Version}>
                  <b>Version {version.Version}</b>
                  {version.Stable ? <span class="badge tone-good">stable</span> : null}
                  {version.Stop ? <span class="badge tone-done">stopped</span> : null}
                  <span class="muted" title={dateTime(version.SubmitTime)}>
                    {" "}
                    submitted {ago(version.SubmitTime)}
                  </span>
                  {diff ? <span class="muted"> · {changes} change{changes === 1 ? "" : "s"} from the previous version</span> : null}
                  {version.Version !== job?.Version && job ? (
                    <>
                      {" "}
                      <ActionButton
                        label={`Revert to ${version.Version}`}
                        confirm={`Confirm revert to ${version.Version}`}
                        capability="submit-job"
                        run={() => send(at("/revert"), { method: "PUT", body: { JobID: id, JobVersion: version.Version, EnforcePriorVersion: job.Version } })}
                      />
                    </>
                  ) : null}
                </li>
              );
            })}
          </ol>
        )}
      </Section>
    </>
  );
}
