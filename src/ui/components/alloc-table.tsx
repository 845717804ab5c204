/** Allocations as a table: ID, group, status, where, when. */
import type { AllocStub } from "../api/shapes.ts";
import { ago, shortId } from "../format.ts";
import { paths } from "../router.ts";
import { StatusBadge } from "./common.tsx";

export function AllocTable({ allocs, showJob = false }: { allocs: AllocStub[]; showJob?: boolean }) {
  if (allocs.length === 0) return <p class="muted">No allocations.</p>;
  const sorted = [...allocs].sort((a, b) => (b.CreateTime ?? 0) - (a.CreateTime ?? 0));
  return (
    <div class="table-wrap">
      <table class="alloc-table">
        <thead>
          <tr>
            <th scope="col">ID</th>
            {showJob ? <th scope="col">Job</th> : null}
            <th scope="col">Name</th>
            <th scope="col">Status</th>
            <th scope="col">Desired</th>
            <th scope="col">Node</th>
            <th scope="col" class="num">Version</th>
            <th scope="col">Modified</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((alloc) => (
            <tr key={alloc.ID} data-alloc={alloc.ID}>
              <td class="mono">
                <a href={paths.allocation(alloc.ID)}>{shortId(alloc.ID)}</a>
              </td>
              {showJob ? (
                <td>
                  <a href={paths.job(alloc.JobID ?? "")}>{alloc.JobID}</a>
                </td>
              ) : null}
              <td>{alloc.Name}</td>
              <td>
                <StatusBadge status={alloc.ClientStatus ?? ""} />
              </td>
              <td>{alloc.DesiredStatus}</td>
              <td>
                <a href={paths.client(alloc.NodeID ?? "")}>{alloc.NodeName || shortId(alloc.NodeID ?? "")}</a>
              </td>
              <td class="num">{alloc.JobVersion}</td>
              <td title={String(alloc.ModifyTime)}>{ago(alloc.ModifyTime)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
