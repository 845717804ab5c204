/**
 * `drover job init [options] [filename]`: write an example job file
 * (example.nomad unless named). The example runs on a drover agent as it is:
 * an exec task with a port, a service and resources, commented to explain
 * each block; -short leaves the comments out.
 */
import { existsSync, writeFileSync } from "node:fs";
import { positionals, type Subcommand } from "../command.ts";
import { UsageError } from "../flags.ts";

const DEFAULT_FILE = "example.nomad";

const EXAMPLE = `# A job is what drover runs: one or more groups of tasks. Run it with
# "drover job run example.nomad"; "drover job plan" shows what would change.
job "example" {
  # The datacenters the job may be placed in.
  datacenters = ["dc1"]

  # "service" runs until stopped; "batch" runs to completion; "system" runs on every node.
  type = "service"

  # How a change is rolled out: one allocation at a time, healthy for 10s before the next.
  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "3m"
    auto_revert      = false
  }

  # A group's tasks are placed together on one node, count times.
  group "web" {
    count = 1

    network {
      # A dynamic port, given to the task as NOMAD_PORT_http.
      port "http" {}
    }

    # What to do when a task fails on its node.
    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    task "server" {
      # exec runs the command isolated on the node; raw_exec runs it as the agent runs.
      driver = "exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "\${NOMAD_PORT_http}"]
      }

      # Registered in the service catalog ("drover" provider), with a check.
      service {
        name     = "example-web"
        port     = "http"
        provider = "nomad"

        check {
          type     = "tcp"
          interval = "10s"
          timeout  = "2s"
        }
      }

      # CPU in MHz, memory in MiB.
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

/** The example without its comments and the blank lines they leave. */
function shortExample(): string {
  return EXAMPLE.split("\n")
    .filter((line) => !line.trimStart().startsWith("#"))
    .join("\n")
    .replace(/\{\n\n+/g, "{\n")
    .replace(/^\n+/, "");
}

export const jobInit: Subcommand = {
  summary: "Create an example job file",
  usage: `Usage: drover job init [options] [filename]

  Writes an example job file (default "${DEFAULT_FILE}") that runs on a
  drover agent, to start a new job from.

Options:
  -short      Leave out the explaining comments.`,
  flags: { booleans: ["short"] },
  async run({ flags, io }) {
    const [file = DEFAULT_FILE] = positionals(flags, 0, 1, "at most one file name");
    if (existsSync(file)) throw new UsageError(`Job '${file}' already exists`);
    writeFileSync(file, flags.booleans.short ? shortExample() : EXAMPLE);
    io.print(`Example job file written to ${file}`);
    return 0;
  },
};
