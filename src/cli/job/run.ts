/** `drover job run [-detach] [-json] [-check-index N] <file>`: register a job file and follow it until it runs. */
import type { JobRegisterResponse } from "../../structs/api.ts";
import { ADDRESS_USAGE, positionals, withFlags, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";
import { EXIT_PLACEMENT_FAILED, monitorEvaluation, waitForAllocs } from "../monitor.ts";
import { nextLaunchText } from "./status.ts";
import { JOB_FILE_FLAGS, JOB_FILE_USAGE, jobFileInput, loadJobFile } from "./job-file.ts";

export const jobRun: Subcommand = {
  summary: "Run a new job or update an existing one",
  usage: `Usage: drover job run [options] <path>

  Reads a job file (Nomad HCL2, or API JSON {"Job": {...}}; "-" reads stdin),
  registers it, shows what was placed, and waits until the allocations run.
  Exit code 2 when some allocations could not be placed.

Options:
${ADDRESS_USAGE}
${JOB_FILE_USAGE}
  -detach            Return once the job is registered.
  -check-index <n>   Register only if the job's modify index is n (0: only if new).
  -verbose           Full IDs.`,
  flags: withFlags(JOB_FILE_FLAGS, { booleans: ["detach", "verbose"], strings: ["check-index"] }),
  async run({ flags, client, io }) {
    const [path] = positionals(flags, 1, 1, "one job file");
    const checkIndex = flags.strings["check-index"];
    if (checkIndex !== undefined && !/^\d+$/.test(checkIndex)) throw new UsageError(`-check-index needs a non-negative integer, got "${checkIndex}"`);
    const job = await loadJobFile(jobFileInput(path!, flags, io.env, client.namespace));
    const response = await client.write<JobRegisterResponse>("POST", "/v1/jobs", {
      Job: job,
      ...(checkIndex !== undefined ? { EnforceIndex: true, JobModifyIndex: Number(checkIndex) } : {}),
    });
    // A periodic or parameterized job launches children later: registering it makes no evaluation to follow.
    const parameterized = job.ParameterizedJob !== null;
    const periodic = job.Periodic !== null && !parameterized;
    if (flags.booleans.detach || periodic || parameterized) {
      io.print("Job registration successful");
      if (periodic) io.print(`Approximate next launch time: ${nextLaunchText(job.Periodic!)}`);
      else if (!parameterized) io.print(`Evaluation ID: ${response.EvalID}`);
      return 0;
    }
    const verbose = flags.booleans.verbose ?? false;
    const { placed, allocs } = await monitorEvaluation(client, io, response.EvalID, verbose);
    if (!placed) return EXIT_PLACEMENT_FAILED;
    return waitForAllocs(client, io, job.ID, allocs.map((alloc) => alloc.ID), verbose);
  },
};
