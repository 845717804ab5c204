/**
 * HCL2 evaluation of job files, against Nomad 1.6's own expectations
 * (jobspec2/parse_test.go at v1.6.9, MPL-2.0: the cases and the values
 * Nomad gets, translated), then what drover adds: positions in messages,
 * types, validations, templates and the function set.
 */
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { jobVariableFiles, parseJobHcl, type ParseOptions } from "../../src/jobspec/index.ts";
import { ValidationError } from "../../src/lib/validation.ts";
import type { Job } from "../../src/structs/job.ts";
import { tempDir } from "../helpers/index.ts";

const parse = (hcl: string, options: ParseOptions = {}): Promise<Job> => parseJobHcl("input.hcl", hcl, { validate: false, ...options });

/** The lines of the error parsing `hcl` gives (file:line,col: path: message). */
async function refused(hcl: string, options: ParseOptions = {}): Promise<string[]> {
  try {
    await parse(hcl, options);
  } catch (err) {
    if (err instanceof ValidationError) return err.lines();
    throw err;
  }
  throw new Error("expected the job file to be refused");
}

/** A job whose one task runs `snippet` (as parse_test.go's env cases build theirs). */
const taskJob = (snippet: string) => `
job "example" {
  group "group" {
    task "task" {
      driver = "docker"
      config {}
      ${snippet}
    }
  }
}`;

describe("Nomad 1.6's jobspec2 tests", () => {
  test("TestParse_VarsAndFunctions: for expressions, functions and -var", async () => {
    const hcl = `
variables {
  region_var = "default"
}
job "example" {
  datacenters = [for s in ["dc1", "dc2"] : upper(s)]
  region      = var.region_var
}`;
    const job = await parse(hcl, { variables: { args: ["region_var=aug"] } });
    expect(job.Datacenters).toEqual(["DC1", "DC2"]);
    expect(job.Region).toBe("aug");
  });

  describe("TestParse_VariablesDefaultsAndSet", () => {
    const hcl = `
variables {
  region_var = "default_region"
}

variable "dc_var" {
  default = "default_dc"
}

job "example" {
  datacenters = [var.dc_var]
  region      = var.region_var
}`;
    test("defaults", async () => {
      const job = await parse(hcl);
      expect([job.Datacenters, job.Region]).toEqual([["default_dc"], "default_region"]);
    });
    test("set via -var args", async () => {
      const job = await parse(hcl, { variables: { args: ["dc_var=set_dc", "region_var=set_region"] } });
      expect([job.Datacenters, job.Region]).toEqual([["set_dc"], "set_region"]);
    });
    test("set via envvars", async () => {
      const job = await parse(hcl, { variables: { env: { NOMAD_VAR_dc_var: "set_dc", NOMAD_VAR_region_var: "set_region", NOMAD_VAR_other: "ignored" } } });
      expect([job.Datacenters, job.Region]).toEqual([["set_dc"], "set_region"]);
    });
    test("set via var-files, HCL and JSON; -var wins over both", async () => {
      const files = await jobVariableFiles([
        { name: "a.hcl", text: 'dc_var = "set_dc"\n\tregion_var = "set_region"' },
        { name: "b.json", text: '{"region_var": "json_region"}' },
      ]);
      const job = await parse(hcl, { variables: { files } });
      expect([job.Datacenters, job.Region]).toEqual([["set_dc"], "json_region"]);
      const overridden = await parse(hcl, { variables: { files, args: ["dc_var=arg_dc"], env: { NOMAD_VAR_dc_var: "env_dc" } } });
      expect(overridden.Datacenters).toEqual(["arg_dc"]);
    });
    test("an invalid var file is refused", async () => {
      await expect(jobVariableFiles([{ name: "vars.hcl", text: "invalid{hcl" }])).rejects.toThrow(/vars\.hcl:1,/);
    });
  });

  test("TestParse_UnknownVariables: unknown roots stay as written", async () => {
    const hcl = `
variables {
  region_var = "default"
}
job "example" {
  region = var.region_var
  meta {
    known_var   = "\${var.region_var}"
    unknown_var = "\${UNKNOWN}"
  }
}`;
    const job = await parse(hcl, { variables: { args: ["region_var=aug"] } });
    expect(job.Meta).toEqual({ known_var: "aug", unknown_var: "${UNKNOWN}" });
  });

  test("TestParse_UnsetVariables: an unset variable is named, at its block", async () => {
    const hcl = `variable "region_var" {}\njob "example" {\n  region = var.region_var\n}`;
    expect(await refused(hcl)).toEqual([
      'input.hcl:1,1: variable["region_var"]: unset variable "region_var": give it a value with -var region_var=..., a var file, or NOMAD_VAR_region_var, or a default',
    ]);
  });

  describe("TestParse_Locals", () => {
    const hcl = `
variables {
  region_var = "default_region"
}

locals {
  # literal local
  dc = "local_dc"
  # local that depends on a variable
  region = "\${var.region_var}.example"
}

job "example" {
  datacenters = [local.dc]
  region      = local.region
}`;
    test("defaults", async () => {
      const job = await parse(hcl);
      expect([job.Datacenters, job.Region]).toEqual([["local_dc"], "default_region.example"]);
    });
    test("set via -var arguments", async () => {
      const job = await parse(hcl, { variables: { args: ["region_var=set_region"] } });
      expect(job.Region).toBe("set_region.example");
    });
  });

  describe("TestParse_FileOperators", () => {
    const dir = tempDir("drover-hcl2-");
    writeFileSync(join(dir, "region.txt"), "from-a-file\n");
    const hcl = 'job "example" {\n  region = file("region.txt")\n}';
    test("enabled where the job file is on disk: relative to its folder", async () => {
      const job = await parse(hcl, { filesDir: dir });
      expect(job.Region).toBe("from-a-file\n");
    });
    test("disabled for a job sent to the API", async () => {
      expect(await refused(hcl)).toEqual([expect.stringContaining("input.hcl:2,3: job.region: file(): filesystem functions are disabled here")]);
    });
  });

  test("TestParseDynamic: dynamic groups, interpolation inside maps", async () => {
    const hcl = `
job "example" {
  dynamic "group" {
    for_each = [
      { name = "groupA", idx = 1 },
      { name = "groupB", idx = 2 },
      { name = "groupC", idx = 3 },
    ]
    labels   = [group.value.name]

    content {
      count = group.value.idx

      service {
        port = group.value.name
      }

      task "simple" {
        driver  = "raw_exec"
        config {
          command = group.value.name
        }
        meta {
          VERSION = group.value.idx
        }
        env {
          ID = format("id:%s", group.value.idx)
        }
        resources {
          cpu = group.value.idx
        }
      }
    }
  }
}`;
    const job = await parse(hcl);
    expect(job.TaskGroups.map((group) => group.Name)).toEqual(["groupA", "groupB", "groupC"]);
    expect(job.TaskGroups.map((group) => group.Count)).toEqual([1, 2, 3]);
    const [a, b, c] = job.TaskGroups;
    expect(a!.Tasks[0]!.Resources.CPU).toBe(1);
    expect(a!.Services[0]!.PortLabel).toBe("groupA");
    expect(a!.Tasks[0]!.Config.command).toBe("groupA");
    expect(a!.Tasks[0]!.Meta.VERSION).toBe("1");
    expect(a!.Tasks[0]!.Env.ID).toBe("id:1");
    expect(b!.Tasks[0]!.Env.ID).toBe("id:2");
    expect(c!.Tasks[0]!.Meta.VERSION).toBe("3");
  });

  describe("TestParseJob_JobWithFunctionsAndLookups", () => {
    const hcl = `
variable "env" {
  description = "target environment for the job"
}

locals {
  environments = {
    prod    = { count = 20, dcs = ["prod-dc1", "prod-dc2"] },
    staging = { count = 3, dcs = ["dc1"] },
  }

  env = lookup(local.environments, var.env, { count = 0, dcs = [] })
}

job "job-webserver" {
  datacenters = local.env.dcs
  group "group-webserver" {
    count = local.env.count

    task "server" {
      driver = "docker"

      config {
        image = "hashicorp/http-echo"
        args  = ["-text", "Hello from \${var.env}"]
      }
    }
  }
}`;
    const cases: [string, string[], number][] = [
      ["prod", ["prod-dc1", "prod-dc2"], 20],
      ["staging", ["dc1"], 3],
      ["unknown", [], 0],
    ];
    for (const [env, datacenters, count] of cases) {
      test(env, async () => {
        const job = await parse(hcl, { variables: { args: [`env=${env}`] } });
        expect(job.Datacenters).toEqual(datacenters);
        expect(job.TaskGroups[0]!.Count).toBe(count);
        expect(job.TaskGroups[0]!.Tasks[0]!.Config).toEqual({ image: "hashicorp/http-echo", args: ["-text", `Hello from ${env}`] });
      });
    }
  });

  describe("TestParse_TaskEnvs", () => {
    const cases: [string, string, Record<string, string>][] = [
      ["block", 'env {\n  key = "value"\n}', { key: "value" }],
      ["attribute", 'env = {\n  "key.dot" = "val1"\n  key_unquoted_without_dot = "val2"\n}', { "key.dot": "val1", key_unquoted_without_dot: "val2" }],
      ["attribute_colons", 'env = {\n  "key.dot" : "val1"\n  key_unquoted_without_dot : "val2"\n}', { "key.dot": "val1", key_unquoted_without_dot: "val2" }],
      ["attribute_expression", 'env = {for k in ["a", "b"]: k => "val-${k}" }', { a: "val-a", b: "val-b" }],
    ];
    for (const [name, snippet, env] of cases) {
      test(name, async () => {
        expect((await parse(taskJob(snippet))).TaskGroups[0]!.Tasks[0]!.Env).toEqual(env);
      });
    }
  });

  test("Test_TaskEnvs_Invalid: an undefined local is named at its field", async () => {
    expect(await refused(taskJob("env = { key = local.undefined_local }"))).toEqual([
      'input.hcl:7,15: job.group["group"].task["task"].env.key: local.undefined_local: no local "undefined_local" is declared',
    ]);
  });

  describe("TestParse_UndefinedVariables: values with client references stay intact", () => {
    const cases = ["plain", "foo-${BAR}", "foo-${attr.network.dev-us-east1-relay-vpc.external-ip.0}", '${env["BLAH"]}'];
    for (const written of cases) {
      test(written, async () => {
        // Written as Nomad's test writes it: quotes inside ${ } are part of the expression.
        expect((await parse(`job "example" {\n  region = "${written}"\n}`)).Region).toBe(written);
      });
    }
    // Nomad keeps any unknown root; drover keeps only those its task runner resolves
    // (src/jobspec/templates.ts) and names the others rather than pass on text no one will replace.
    for (const written of ['${mixed-indexing.0[3]["FOO"].5}', 'with spaces ${   root.  field[  "FOO"].5  }']) {
      test(written, async () => {
        expect(await refused(`job "example" {\n  region = "${written}"\n}`)).toEqual([expect.stringContaining("input.hcl:2,3: job.region: the expression")]);
      });
    }
    test("unquoted", async () => {
      expect((await parse('job "example" {\n  region = meta.mytest\n}')).Region).toBe("${meta.mytest}");
    });
  });
});

describe("variables", () => {
  test("type constraints convert -var text, and a value that does not fit is named", async () => {
    const hcl = `
variable "count" {
  type = number
}
variable "dcs" {
  type = list(string)
  default = ["dc1"]
}
variable "limits" {
  type = object({ cpu = number, memory = optional(number, 256) })
  default = { cpu = 100 }
}
job "example" {
  datacenters = var.dcs
  group "g" {
    count = var.count
    task "t" {
      driver = "docker"
      config {}
      resources {
        cpu    = var.limits.cpu
        memory = var.limits.memory
      }
    }
  }
}`;
    const job = await parse(hcl, { variables: { args: ["count=3", 'dcs=["a", "b"]'] } });
    expect(job.TaskGroups[0]!.Count).toBe(3);
    expect(job.Datacenters).toEqual(["a", "b"]);
    expect(job.TaskGroups[0]!.Tasks[0]!.Resources).toMatchObject({ CPU: 100, MemoryMB: 256 });
    expect(await refused(hcl, { variables: { args: ["count=many"] } })).toEqual([
      'input.hcl:2,1: variable["count"]: the value from -var count: does not fit the variable\'s type: a number is required, got a string',
    ]);
    expect(await refused(hcl, { variables: { args: ["count=1", "nope=1"] } })).toEqual(['input.hcl:1,1: -var "nope": no variable "nope" is declared in the job file']);
  });

  test("validation blocks check the value that is used", async () => {
    const hcl = `
variable "dc" {
  default = "dc1"
  validation {
    condition     = length(var.dc) > 2
    error_message = "The datacenter name must be longer than two characters."
  }
}
job "example" {
  datacenters = [var.dc]
}`;
    expect((await parse(hcl)).Datacenters).toEqual(["dc1"]);
    expect(await refused(hcl, { variables: { args: ["dc=x"] } })).toEqual([
      'input.hcl:2,1: variable["dc"]: invalid value for variable "dc" (from -var dc): The datacenter name must be longer than two characters.',
    ]);
  });

  test("locals may use locals written after them; a cycle is named", async () => {
    const ok = 'locals {\n  a = "${local.b}-a"\n  b = "b"\n}\njob "example" {\n  region = local.a\n}';
    expect((await parse(ok)).Region).toBe("b-a");
    const cycle = 'locals {\n  a = local.b\n  b = local.a\n}\njob "example" {\n  region = local.a\n}';
    expect(await refused(cycle)).toContain("input.hcl:2,3: locals.a: locals refer to each other in a cycle: local.a -> local.b -> local.a");
  });
});

describe("expressions", () => {
  test("conditionals, splats, templates with directives, escapes and client references", async () => {
    const hcl = `
locals {
  services = [{ name = "a", port = 1 }, { name = "b", port = 2 }]
  prod     = false
}
job "example" {
  region = local.prod ? "prod" : "dev"
  datacenters = local.services[*].name
  meta {
    ports    = join(",", local.services.*.port)
    list     = "%{ for s in local.services ~}\${s.name}=\${s.port};%{ endfor ~}"
    cond     = "%{ if local.prod }on%{ else }off%{ endif }"
    escaped  = "$\${not.evaluated} %%{ directive }"
    runtime  = "\${NOMAD_ALLOC_DIR}/\${node.unique.name}/\${meta.rack}"
    kernel   = format("%s-x", attr.kernel.name)
    math     = 7 % 4 * 2 + 1
    heredoc  = <<-EOT
      count \${length(local.services)}
    EOT
  }
}`;
    const job = await parse(hcl);
    expect(job.Region).toBe("dev");
    expect(job.Datacenters).toEqual(["a", "b"]);
    expect(job.Meta).toEqual({
      ports: "1,2",
      list: "a=1;b=2;",
      cond: "off",
      escaped: "${not.evaluated} %{ directive }",
      runtime: "${NOMAD_ALLOC_DIR}/${node.unique.name}/${meta.rack}",
      kernel: "${attr.kernel.name}-x",
      math: "7",
      heredoc: "count 2\n",
    });
  });

  test("count from a local and dynamic blocks with an iterator inside a group", async () => {
    const hcl = `
locals {
  n     = 3
  ports = { http = 8080, grpc = 9090 }
}
job "example" {
  group "g" {
    count = local.n
    network {
      dynamic "port" {
        for_each = local.ports
        iterator = p
        labels   = [p.key]
        content {
          static = p.value
        }
      }
    }
  }
}`;
    const group = (await parse(hcl)).TaskGroups[0]!;
    expect(group.Count).toBe(3);
    expect(group.Networks[0]!.ReservedPorts.map((port) => [port.Label, port.Value])).toEqual([
      ["grpc", 9090],
      ["http", 8080],
    ]);
    // A problem inside a dynamic block's content is placed at the attribute in the file.
    expect(await refused(hcl.replace("static = p.value", "static = p.value + \"x\""))).toEqual([
      'input.hcl:15,11: job.group["g"].network.dynamic["port"].content.static: the right operand of +: a number is required, got a string',
    ]);
  });

  test("an evaluation problem names its file, line, column and field, with the file's other problems", async () => {
    const hcl = 'job "example" {\n  group "g" {\n    count = 1 + "x"\n    colour = 1\n  }\n}';
    expect((await refused(hcl)).sort()).toEqual([
      'input.hcl:3,5: job.group["g"].count: the right operand of +: a number is required, got a string',
      'input.hcl:4,5: job.group["g"].colour: unknown attribute',
    ]);
  });
});
