/** Allocations as a table: ID, group, status, where, when. */
import type { AllocStub } from "../api/shapes.ts";
import { ago, shortId } from "../format.ts";
import { paths } from "../router.ts";
import { StatusBadge, Table } from "./common.tsx";

export function AllocTable({ allocs, showJob = false }: { allocs: AllocStub[]; showJob?: boolean }) {
  if (allocs.length === 0) return <p class="muted">No allocations.</p>;
  const sorted = [...allocs].sort((a, b) => (b.CreateTime ?? 0) - (a.CreateTime ?? 0));
  return (
    <Table class="alloc-table" columns={["ID", ...(showJob ? ["Job"] : []), "Name", "Status", "Desired", "Node", { label: "Version", num: true }, "Modified"]}>
      {sorted.map((alloc) => (
        <tr key={alloc.ID} data-alloc={alloc.ID}>
          <td class="mono">
            <a href={paths.allocation(alloc.ID)}>{shortId(alloc.ID)}</a>
          </td>
          {showJob ? (
            <td>
              <a href={paths.job(alloc.JobID ?? "", alloc.Namespace)}>{alloc.JobID}</a>
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
    </Table>
  );
}
