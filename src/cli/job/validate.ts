/** `drover job validate [options] <path>`: check a job file, locally and with the agent, without running it. */
import type { JobValidateResponse } from "../../structs/api.ts";
import { ADDRESS_USAGE, positionals, type Subcommand } from "../command.ts";
import { JOB_FILE_FLAGS, JOB_FILE_USAGE, jobFileInput, loadJobFile } from "./job-file.ts";

export const jobValidate: Subcommand = {
  summary: "Checks if a given job specification is valid",
  usage: `Usage: drover job validate [options] <path>

  Checks the job file's syntax and fields, then asks the agent to validate it
  (drivers and server-side rules). Exit code 1 when it is not valid.

Options:
${ADDRESS_USAGE}
${JOB_FILE_USAGE}`,
  flags: JOB_FILE_FLAGS,
  async run({ flags, client, io }) {
    const [path] = positionals(flags, 1, 1, "one job file");
    const job = await loadJobFile(jobFileInput(path!, flags, io.env, client.namespace));
    const response = await client.write<JobValidateResponse>("PUT", "/v1/validate/job", { Job: job });
    if (response.Error) {
      io.error(`Job validation errors:\n${response.ValidationErrors?.length ? response.ValidationErrors.map((line) => `  * ${line}`).join("\n") : response.Error}`);
      return 1;
    }
    if (response.Warnings) io.print(`Job Warnings:\n${response.Warnings}\n`);
    io.print("Job validation successful");
    return 0;
  },
};
