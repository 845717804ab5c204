/** A deployment as Nomad's `deployment status` prints it: key = value lines, then one row per group. */
import type { Deployment } from "../../structs/deployment.ts";
import { formatKV, formatList, formatTime, shortId } from "../format.ts";

/** Go's zero time: a group whose deadline clock has not started. */
const ZERO_TIME_YEAR = 1;

function deadline(requireProgressBy: string): string {
  const date = new Date(requireProgressBy);
  return Number.isNaN(date.getTime()) || date.getUTCFullYear() <= ZERO_TIME_YEAR ? "N/A" : formatTime(date);
}

export function formatDeployment(deployment: Deployment, verbose: boolean): string {
  const head = formatKV([
    ["ID", shortId(deployment.ID, verbose)],
    ["Job ID", deployment.JobID],
    ["Job Version", String(deployment.JobVersion)],
    ["Status", deployment.Status],
    ["Description", deployment.StatusDescription],
  ]);
  const groups = deployedTable(deployment);
  return groups === undefined ? head : `${head}\n\nDeployed\n${groups}`;
}

/** The "Deployed" table: one row per group, with canary and auto-revert columns only when some group uses them. */
export function deployedTable(deployment: Deployment): string | undefined {
  const groups = Object.entries(deployment.TaskGroups).sort(([a], [b]) => (a < b ? -1 : 1));
  if (groups.length === 0) return undefined;
  const canaries = groups.some(([, state]) => state.DesiredCanaries > 0);
  const autoRevert = groups.some(([, state]) => state.AutoRevert);
  const header = ["Task Group", ...(autoRevert ? ["Auto Revert"] : []), ...(canaries ? ["Promoted"] : []), "Desired", ...(canaries ? ["Canaries"] : []), "Placed", "Healthy", "Unhealthy", "Progress Deadline"];
  const rows = groups.map(([name, state]) => [
    name,
    ...(autoRevert ? [String(state.AutoRevert)] : []),
    ...(canaries ? [state.DesiredCanaries > 0 ? String(state.Promoted) : "N/A"] : []),
    String(state.DesiredTotal),
    ...(canaries ? [String(state.DesiredCanaries)] : []),
    String(state.PlacedAllocs),
    String(state.HealthyAllocs),
    String(state.UnhealthyAllocs),
    deadline(state.RequireProgressBy),
  ]);
  return formatList([header, ...rows]);
}

export const DEPLOYMENT_HEADER = ["ID", "Job ID", "Job Version", "Status", "Description"];

export function deploymentRow(deployment: Deployment, verbose: boolean): string[] {
  return [shortId(deployment.ID, verbose), deployment.JobID, String(deployment.JobVersion), deployment.Status, deployment.StatusDescription];
}
