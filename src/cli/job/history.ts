/**
 * `drover job history` and `drover job revert`: the versions the server
 * keeps of a job, and going back to one of them.
 *
 *   history  GET /v1/job/:id/versions?diffs=true
 *   revert   PUT /v1/job/:id/revert {JobID, JobVersion, EnforcePriorVersion}
 */
import type { JobRegisterResponse } from "../../structs/api.ts";
import type { Job } from "../../structs/job.ts";
import { ADDRESS_USAGE, DATA_FLAGS, DATA_USAGE, positionals, printData, withFlags, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { formatKV, formatNanos } from "../format.ts";
import { monitorEvaluation } from "../monitor.ts";
import { resolveJob } from "../prefix.ts";
import type { JobDiff } from "../../structs/job-diff.ts";
import { formatJobDiff } from "./diff.ts";

interface JobVersions {
  Versions: Job[];
  /** Diffs[i] is what changed from Versions[i + 1] to Versions[i]. */
  Diffs: JobDiff[] | null;
}

function versionNumber(text: string, flag: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} needs a version number, got "${text}"`);
  return Number(text);
}

function formatVersion(job: Job, diff: JobDiff | undefined, full: boolean): string {
  const pairs: [string, string][] = [
    ["Version", String(job.Version)],
    ["Stable", String(job.Stable)],
    ["Submit Date", formatNanos(job.SubmitTime)],
  ];
  if (diff && diff.Type !== "None") pairs.push(["Diff", ""]);
  let out = formatKV(pairs);
  if (diff && diff.Type !== "None") out += `\n${formatJobDiff(diff, false)}`;
  if (full) out += `\nFull\n${JSON.stringify(job, null, 4)}`;
  return out;
}

export const jobHistory: Subcommand = {
  summary: "Display all tracked versions of a job",
  usage: `Usage: drover job history [options] <job>

  Lists the versions of the job the server keeps, newest first.

Options:
${ADDRESS_USAGE}
  -p               Show what changed in each version.
  -full            Show each version's whole job.
  -version <n>     Only this version.
${DATA_USAGE}`,
  flags: withFlags(DATA_FLAGS, { booleans: ["p", "full"], strings: ["version"] }),
  async run({ flags, client, io }) {
    const [prefix] = positionals(flags, 1, 1, "one job ID");
    const stub = await resolveJob(client, prefix!);
    const { body } = await client.get<JobVersions>(`/v1/job/${encodeURIComponent(stub.ID)}/versions`, { diffs: true });
    const wanted = flags.strings.version === undefined ? undefined : versionNumber(flags.strings.version, "-version");
    const entries = body.Versions.map((job, i) => ({ job, diff: body.Diffs?.[i] })).filter(({ job }) => wanted === undefined || job.Version === wanted);
    if (entries.length === 0) throw new UsageError(`job "${stub.ID}" has no version ${wanted}`);
    if (printData(io, flags, wanted === undefined ? body.Versions : entries[0]!.job)) return 0;
    const showDiff = flags.booleans.p ?? false;
    io.print(entries.map(({ job, diff }) => formatVersion(job, showDiff ? diff : undefined, flags.booleans.full ?? false)).join("\n\n"));
    return 0;
  },
};

export const jobRevert: Subcommand = {
  summary: "Revert to a prior version of the job",
  usage: `Usage: drover job revert [options] <job> <version>

  Registers the given version of the job again (as a new version) and
  follows the evaluation that triggers.

Options:
${ADDRESS_USAGE}
  -detach     Return once the revert is registered.
  -verbose    Full IDs.`,
  flags: { booleans: ["detach", "verbose"] },
  async run({ flags, client, io }) {
    const [prefix, versionText] = positionals(flags, 2, 2, "a job ID and a version");
    const version = versionNumber(versionText!, "the version");
    const stub = await resolveJob(client, prefix!);
    const response = await client.write<JobRegisterResponse>("PUT", `/v1/job/${encodeURIComponent(stub.ID)}/revert`, { JobID: stub.ID, JobVersion: version });
    if (flags.booleans.detach || !response.EvalID) return 0;
    await monitorEvaluation(client, io, response.EvalID, flags.booleans.verbose ?? false);
    return 0;
  },
};
