import { describe, expect, test } from "bun:test";
import { parseJobFile, parseJobJson } from "../../src/jobspec/index.ts";
import { ValidationError } from "../../src/lib/validation.ts";

const withDevices = (devices: string) => `
job "j" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        ${devices}
      }
    }
  }
}
`;

async function problems(text: string): Promise<string[]> {
  try {
    await parseJobFile("job.hcl", text);
  } catch (err) {
    if (err instanceof ValidationError) return err.problems;
    throw err;
  }
  throw new Error("expected the job file to be refused");
}

describe("the device block", () => {
  test("is read into Nomad's RequestedDevice, with the shorthand operators and Nomad's defaults", async () => {
    const job = await parseJobFile(
      "job.hcl",
      withDevices(`
        device "nvidia/gpu" {
          count = 2
          constraint {
            attribute = "\${device.attr.memory}"
            operator  = ">="
            value     = "2 GiB"
          }
          constraint {
            attribute = "\${device.model}"
            regexp    = "Tesla"
          }
          affinity {
            attribute = "\${device.attr.power}"
            value     = "70 W"
          }
        }
        device "fpga" {}
      `),
    );
    const devices = job.TaskGroups[0]!.Tasks[0]!.Resources.Devices;
    expect(devices.find((device) => device.Name === "nvidia/gpu")).toEqual({
      Name: "nvidia/gpu",
      Count: 2,
      Constraints: [
        { LTarget: "${device.attr.memory}", Operand: ">=", RTarget: "2 GiB" },
        { LTarget: "${device.model}", Operand: "regexp", RTarget: "Tesla" },
      ],
      Affinities: [{ LTarget: "${device.attr.power}", Operand: "=", RTarget: "70 W", Weight: 50 }],
    });
    expect(devices.find((device) => device.Name === "fpga")).toEqual({ Name: "fpga", Count: 1, Constraints: [], Affinities: [] });
  });

  test("is accepted in API JSON, and a job without devices keeps an empty list", () => {
    const job = parseJobJson(
      "job.json",
      JSON.stringify({
        Job: {
          ID: "j",
          TaskGroups: [
            {
              Name: "g",
              Tasks: [
                { Name: "t", Driver: "raw_exec", Config: { command: "x" }, Resources: { Devices: [{ Name: "gpu", Count: 1 }] } },
                { Name: "u", Driver: "raw_exec", Config: { command: "x" }, Resources: { Devices: null } },
              ],
            },
          ],
        },
      }),
    );
    const [withGpu, without] = job.TaskGroups[0]!.Tasks;
    expect(withGpu!.Resources.Devices).toEqual([{ Name: "gpu", Count: 1, Constraints: [], Affinities: [] }]);
    expect(without!.Resources.Devices).toEqual([]);
  });

  const at = 'job.group["g"].task["t"].resources.device["nvidia//x"]';

  test("a count below 1 and a target that is not the device's are refused by name", async () => {
    const found = await problems(withDevices(`device "nvidia/gpu" {\n count = 0\n constraint {\n attribute = "\${node.class}"\n value = "x"\n }\n }`));
    const gpu = 'job.group["g"].task["t"].resources.device["nvidia/gpu"]';
    expect(found).toEqual([
      `${gpu}.count: must be at least 1`,
      expect.stringContaining(`${gpu}.constraint[0].attribute: "\${node.class}" is not a device target`),
    ]);
  });

  test("bad names, operators, values and weights are refused naming the field, every one at once", async () => {
    const found = await problems(
      withDevices(`
        device "nvidia//x" {
          constraint {
            attribute = "\${device.attr.memory}"
            operator  = "~>"
            value     = "1"
          }
          constraint {
            attribute = "\${device.attr.memory}"
            version   = ">= 1.0"
          }
          constraint {
            attribute = "\${device.model}"
            regexp    = "("
          }
          constraint {
            attribute = "\${device.model}"
            operator  = "is_set"
            value     = "x"
          }
          constraint {
            operator  = ">"
            value     = "1"
          }
          affinity {
            attribute = "\${device.model}"
            value     = "x"
            weight    = 0
          }
        }
      `),
    );
    expect(found).toEqual([
      `${at}: "nvidia//x" must be <type>, <vendor>/<type> or <vendor>/<type>/<name>`,
      expect.stringContaining(`${at}.constraint[0].operator: unknown operator "~>"`),
      `${at}.constraint[1].operator: operator "version" is not supported by drover on devices (use =, <, >=, regexp, ...)`,
      expect.stringMatching(/constraint\[2\]\.value: invalid regular expression/),
      `${at}.constraint[3].value: operator "is_set" takes no value`,
      `${at}.constraint[4].attribute: must name what to compare (e.g. \${device.attr.memory})`,
      `${at}.affinity[0].weight: must be between -100 and 100, and not 0 (got 0)`,
    ]);
  });

  test("distinct_hosts is a node rule, refused inside a device", async () => {
    const found = await problems(withDevices(`device "gpu" {\n constraint {\n distinct_hosts = true\n }\n }`));
    expect(found).toContain('job.group["g"].task["t"].resources.device["gpu"].constraint[0].operator: operator "distinct_hosts" applies to nodes, not to devices');
  });
});
