/** /ui/clients and /ui/clients/<id>: the node, its resources, drivers and their health, devices, live host usage and its allocs. */
import { HostStatsSchema, NodeListSchema, NodeSchema, AllocListSchema, type Node } from "../api/shapes.ts";
import { can } from "../acl/capabilities.ts";
import { Denied, ErrorBanner, KeyValues, Loading, ObjectPending, Section, StatusBadge, Table } from "../components/common.tsx";
import { AllocTable } from "../components/alloc-table.tsx";
import { MIB } from "../components/usage.ts";
import { sampleTime, USAGE_COLUMNS, UsagePair, usageLines } from "../components/usage-charts.tsx";
import { useAccess } from "../hooks/use-access.ts";
import { useSeries } from "../hooks/use-series.ts";
import { useWatch } from "../hooks/use-watch.ts";
import { bytes, dateTime, mhz, shortId, timeOfDay } from "../format.ts";
import { paths } from "../router.ts";

const LINES = usageLines("capacity", "total");

export function ClientsPage() {
  const { data: nodes, error } = useWatch("/v1/nodes", NodeListSchema);
  return (
    <>
      <div class="page-head">
        <h1>Clients</h1>
      </div>
      <ErrorBanner error={error} what="Listing clients" />
      <Section title="Nodes">
        {!nodes ? (
          error ? null : <Loading what="clients" />
        ) : (
          <Table columns={["ID", "Name", "Datacenter", "Status", "Eligibility", "Version"]}>
            {nodes.map((node) => (
              <tr key={node.ID}>
                <td class="mono">
                  <a href={paths.client(node.ID)}>{shortId(node.ID)}</a>
                </td>
                <td>{node.Name}</td>
                <td>{node.Datacenter}</td>
                <td>
                  <StatusBadge status={node.Status ?? ""} />
                </td>
                <td>{node.Drain ? "draining" : node.SchedulingEligibility}</td>
                <td>{node.Version}</td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
    </>
  );
}

function HostCharts({ node }: { node: Node }) {
  const cpuTotal = node.NodeResources?.Cpu?.CpuShares ?? 0;
  const series = useSeries("/v1/client/stats", HostStatsSchema, USAGE_COLUMNS, (stats) => ({
    time: sampleTime(stats.Timestamp),
    values: [stats.CPUTicksConsumed ?? 0, cpuTotal, stats.Memory?.Used ?? 0, stats.Memory?.Total ?? (node.NodeResources?.Memory?.MemoryMB ?? 0) * MIB],
  }));
  return (
    <div class="charts">
      <UsagePair owner="Host" series={series} index={0} lines={LINES} />
    </div>
  );
}

export function ClientPage({ id }: { id: string }) {
  const access = useAccess();
  const { data: node, error } = useWatch(`/v1/node/${encodeURIComponent(id)}`, NodeSchema);
  const { data: allocs } = useWatch(can(access, "read-job") === false ? null : `/v1/node/${encodeURIComponent(id)}/allocations`, AllocListSchema);
  if (!node) {
    return <ObjectPending kind="Client" id={id} what="the client" error={error} />;
  }
  const resources = node.NodeResources;
  const reserved = node.ReservedResources;
  const devices = resources?.Devices ?? [];
  const attributes = Object.entries(node.Attributes).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <div class="page-head">
        <h1>
          <span class="crumb">Client</span> {node.Name}
        </h1>
        <StatusBadge status={node.Status ?? ""} />
      </div>
      <ErrorBanner error={error} />
      <Section title="Overview">
        <KeyValues
          items={[
            ["ID", <span class="mono">{node.ID}</span>],
            ["Datacenter", node.Datacenter],
            ["Class", node.NodeClass || "—"],
            ["Address", node.HTTPAddr],
            ["Eligibility", node.SchedulingEligibility],
            ["Drain", node.Drain ? "draining" : "no"],
            ["Version", node.Attributes["drover.version"] ?? node.Attributes["nomad.version"] ?? "—"],
            ["OS", node.Attributes["os.pretty_name"] ?? node.Attributes["os.name"] ?? "—"],
          ]}
        />
      </Section>
      <Section title="Resources" id="resources">
        <KeyValues
          items={[
            ["CPU", `${mhz(resources?.Cpu?.CpuShares ?? 0)} on ${resources?.Cpu?.TotalCpuCores ?? 0} cores (reserved for the host: ${mhz(reserved?.Cpu?.CpuShares ?? 0)})`],
            ["Memory", `${bytes((resources?.Memory?.MemoryMB ?? 0) * MIB)} (reserved: ${bytes((reserved?.Memory?.MemoryMB ?? 0) * MIB)})`],
            ["Disk", `${bytes((resources?.Disk?.DiskMB ?? 0) * MIB)} (reserved: ${bytes((reserved?.Disk?.DiskMB ?? 0) * MIB)})`],
          ]}
        />
        {can(access, "node:read") === false ? <Denied capability="node:read" /> : <HostCharts node={node} />}
      </Section>
      <Section title="Drivers" id="drivers">
        <Table columns={["Driver", "Detected", "Health", "Since"]}>
          {Object.entries(node.Drivers)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([name, driver]) => (
              <tr key={name} data-driver={name}>
                <td>{name}</td>
                <td>{driver.Detected ? "yes" : "no"}</td>
                <td>
                  <StatusBadge status={driver.Healthy ? "healthy" : "unhealthy"} />{" "}
                  {/^(un)?healthy$/i.test(driver.HealthDescription ?? "") ? null : <span class="muted">{driver.HealthDescription}</span>}
                </td>
                <td>{dateTime(driver.UpdateTime)}</td>
              </tr>
            ))}
        </Table>
      </Section>
      <Section title="Devices" id="devices">
        {devices.length === 0 ? (
          <p class="muted">No devices fingerprinted on this node.</p>
        ) : (
          <Table columns={["Device", "Instances", "Attributes"]}>
            {devices.map((group) => (
              <tr key={`${group.Vendor}/${group.Type}/${group.Name}`}>
                <td>
                  {group.Vendor}/{group.Type}/{group.Name}
                </td>
                <td>
                  {group.Instances.map((instance) => (
                    <div key={instance.ID}>
                      <span class="mono">{instance.ID}</span> <StatusBadge status={instance.Healthy ? "healthy" : "unhealthy"} />
                    </div>
                  ))}
                </td>
                <td class="muted">
                  {Object.entries(group.Attributes ?? {})
                    .map(([key, value]) => `${key}: ${typeof value === "object" && value ? JSON.stringify(value) : String(value)}`)
                    .join(", ")}
                </td>
              </tr>
            ))}
          </Table>
        )}
      </Section>
      <Section title={allocs ? `Allocations (${allocs.length})` : "Allocations"} id="allocations">
        {can(access, "read-job") === false ? <Denied capability="read-job" /> : allocs ? <AllocTable allocs={allocs} showJob /> : <Loading what="allocations" />}
      </Section>
      <Section title="Events" id="node-events">
        <ol class="timeline">
          {[...node.Events].reverse().map((event, i) => (
            <li key={i}>
              <time title={dateTime(event.Timestamp)}>{timeOfDay(event.Timestamp)}</time>
              <b>{event.Subsystem}</b>
              <span>{event.Message}</span>
            </li>
          ))}
        </ol>
      </Section>
      <Section title="Attributes" id="attributes">
        <details>
          <summary>{attributes.length} attributes</summary>
          <KeyValues items={attributes.map(([key, value]) => [key, <span class="mono">{value}</span>])} />
        </details>
      </Section>
    </>
  );
}
