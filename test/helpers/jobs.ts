/**
 * The job most tests and benches run: one group "g" of `count` raw_exec
 * tasks "t" sleeping 600 s with 20 MHz and 16 MB, as an HCL file's text and
 * as the API's JSON; kept together so the two say the same.
 */

/**
 * The HCL of the sleep job of type `type`; `job` and `group` are HCL lines
 * (a constraint, a migrate block) placed inside the job and the group.
 */
export function sleepJobHcl(id: string, count: number, { type = "service", job = "", group = "" }: { type?: "service" | "batch"; job?: string; group?: string } = {}): string {
  return `job "${id}" {
  datacenters = ["dc1"]
  type = "${type}"
${job}
  group "g" {
    count = ${count}
${group}
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;
}

/** The API JSON of the sleep job (a service); `group` and `task` fields replace the defaults. */
export function sleepJobBody(id: string, count: number, overrides: { group?: Record<string, unknown>; task?: Record<string, unknown> } = {}): string {
  const task = { Name: "t", Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["600"] }, Resources: { CPU: 20, MemoryMB: 16 }, ...overrides.task };
  return JSON.stringify({
    Job: { ID: id, Type: "service", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Count: count, ...overrides.group, Tasks: [task] }] },
  });
}
