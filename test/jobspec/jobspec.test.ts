import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseJobFile, parseJobHcl, parseJobJson } from "../../src/jobspec/index.ts";
import { HclSyntaxError } from "../../src/lib/hcl.ts";
import { ValidationError } from "../../src/lib/validation.ts";

const SECOND = 1e9;

/** The README-style example: two groups, a port, env with runtime references. */
const EXAMPLE = `
job "example" {
  datacenters = ["dc1"]
  meta {
    team = "core"
  }

  group "web" {
    count = 2
    network {
      port "http" {}
      port "admin" {
        static = 9090
        to     = 8080
      }
    }
    ephemeral_disk {
      sticky = true
      size   = 500
    }
    restart {
      attempts = 5
      mode     = "delay"
    }

    task "srv" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo $NOMAD_ALLOC_INDEX", "\${NOMAD_PORT_http}", 42]
      }
      env {
        GREETING = "hello-\${NOMAD_ALLOC_INDEX}"
        FROM_ENV = "\${env.HOME}/x"
        FROM_META = "\${meta.team}"
        NUMBER   = 7
        LITERAL  = "$\${not_interpolated}"
      }
      resources {
        cpu        = 250
        memory     = 128
        memory_max = 256
      }
      logs {
        max_files     = 3
        max_file_size = 5
      }
      restart {
        delay = "1s"
      }
      kill_timeout = "10s"
      kill_signal  = "SIGTERM"
      leader       = true
    }

    task "sidecar" {
      driver = "exec"
      config {
        command = "/bin/sleep"
      }
      lifecycle {
        hook    = "prestart"
        sidecar = true
      }
    }
  }

  group "worker" {
    task "w" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`;

async function problems(text: string, file = "job.hcl"): Promise<string[]> {
  try {
    await parseJobFile(file, text);
  } catch (err) {
    if (err instanceof ValidationError) return err.problems;
    throw err;
  }
  throw new Error("expected the job file to be refused");
}

const minimal = (task: string, group = "", job = "") => `
job "j" {
  ${job}
  group "g" {
    ${group}
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      ${task}
    }
  }
}
`;

describe("HCL job files", () => {
  test("the example parses into Nomad's API JSON with every default filled in", async () => {
    const job = await parseJobHcl("example.hcl", EXAMPLE);
    expect(job).toMatchObject({
      ID: "example",
      Name: "example",
      Namespace: "default",
      Region: "global",
      Type: "service",
      Priority: 50,
      Datacenters: ["dc1"],
      Meta: { team: "core" },
      Stop: false,
    });
    const [web, worker] = job.TaskGroups;
    expect(web).toMatchObject({
      Name: "web",
      Count: 2,
      EphemeralDisk: { Sticky: true, Migrate: false, SizeMB: 500 },
      RestartPolicy: { Attempts: 5, Interval: 1800 * SECOND, Delay: 15 * SECOND, Mode: "delay" },
      Networks: [
        {
          Mode: "host",
          ReservedPorts: [{ Label: "admin", Value: 9090, To: 8080, HostNetwork: "default" }],
          DynamicPorts: [{ Label: "http", Value: 0, To: 0, HostNetwork: "default", IgnoreCollision: false }],
        },
      ],
    });
    // HCL's parser hands blocks over sorted by label; tasks are found by name.
    const srv = web!.Tasks.find((task) => task.Name === "srv");
    const sidecar = web!.Tasks.find((task) => task.Name === "sidecar");
    expect(srv).toMatchObject({
      Name: "srv",
      Driver: "raw_exec",
      User: "",
      // Kept as written; the driver reads 42 as "42" when it starts the task.
      Config: { command: "/bin/sh", args: ["-c", "echo $NOMAD_ALLOC_INDEX", "${NOMAD_PORT_http}", 42] },
      Env: {
        GREETING: "hello-${NOMAD_ALLOC_INDEX}",
        FROM_ENV: "${env.HOME}/x",
        FROM_META: "${meta.team}",
        NUMBER: "7",
        LITERAL: "${not_interpolated}",
      },
      Meta: {},
      Resources: { CPU: 250, MemoryMB: 128, MemoryMaxMB: 256, DiskMB: null, IOPS: null, Networks: [], Devices: [] },
      // The group's policy with the task's own delay on top.
      RestartPolicy: { Attempts: 5, Interval: 1800 * SECOND, Delay: 1 * SECOND, Mode: "delay" },
      LogConfig: { MaxFiles: 3, MaxFileSizeMB: 5 },
      KillTimeout: 10 * SECOND,
      KillSignal: "SIGTERM",
      Leader: true,
      Lifecycle: null,
      // Every block Nomad has is present, empty when the file says nothing.
      Services: [],
      Templates: [],
      Artifacts: [],
      VolumeMounts: [],
      Constraints: [],
      Vault: null,
      DispatchPayload: null,
      ShutdownDelay: 0,
    });
    expect(sidecar).toMatchObject({
      Driver: "exec",
      Config: { command: "/bin/sleep" },
      Lifecycle: { Hook: "prestart", Sidecar: true },
      Resources: { CPU: 100, MemoryMB: 300, MemoryMaxMB: 0 },
      LogConfig: { MaxFiles: 10, MaxFileSizeMB: 10 },
      KillTimeout: 5 * SECOND,
    });
    expect(worker).toMatchObject({
      Count: 1,
      EphemeralDisk: { Sticky: false, Migrate: false, SizeMB: 300 },
      RestartPolicy: { Attempts: 2, Interval: 1800 * SECOND, Delay: 15 * SECOND, Mode: "fail" },
      Networks: [],
    });
  });

  test("batch jobs get Nomad's batch restart policy; no datacenters means any", async () => {
    const job = await parseJobHcl("b.hcl", minimal("", "", 'type = "batch"'));
    expect(job.Datacenters).toEqual(["*"]);
    expect(job.TaskGroups[0]!.Tasks[0]!.RestartPolicy).toEqual({ Attempts: 3, Interval: 24 * 3600 * SECOND, Delay: 15 * SECOND, Mode: "fail", RenderTemplates: false });
  });

  test("a syntax error names the file, line and column", async () => {
    const err = await parseJobHcl("broken.hcl", 'job "x" {\n  group "g" {\n    count = \n  }\n}\n').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HclSyntaxError);
    expect((err as Error).message).toMatch(/^broken\.hcl:3,\d+/);
  });

  test("every block of Nomad's jobspec is read and kept, whether or not drover runs it", async () => {
    const job = await parseJobHcl(
      "all.hcl",
      minimal(
        'template {\n data = "x"\n destination = "local/x"\n }\n artifact {\n source = "https://example.com/a.tgz"\n }\n shutdown_delay = "5s"\n vault {\n policies = ["p"]\n }',
        'service {\n name = "x"\n }\n volume "v" {\n type = "host"\n source = "data"\n }',
        'update {\n max_parallel = 2\n }\n constraint {\n attribute = "${attr.kernel.name}"\n value = "linux"\n }',
      ),
    );
    const group = job.TaskGroups[0]!;
    const task = group.Tasks[0]!;
    expect(task.Templates[0]).toMatchObject({ EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "restart", Splay: 5 * SECOND, Perms: "0644" });
    expect(task.Artifacts[0]).toEqual({
      GetterSource: "https://example.com/a.tgz",
      GetterOptions: {},
      GetterHeaders: null,
      GetterMode: "any",
      GetterInsecure: false,
      RelativeDest: "local/",
      Chown: false,
    });
    expect(task.ShutdownDelay).toBe(5 * SECOND);
    expect(task.Vault).toEqual({
      Policies: ["p"],
      Role: "",
      Namespace: "",
      Cluster: "default",
      Env: true,
      DisableFile: false,
      ChangeMode: "restart",
      ChangeSignal: "SIGHUP",
      AllowTokenExpiration: false,
    });
    expect(group.Services[0]).toMatchObject({ Name: "x", AddressMode: "auto", Checks: [] });
    expect(group.Volumes).toEqual({
      v: { Name: "v", Type: "host", Source: "data", ReadOnly: false, Sticky: false, AccessMode: "", AttachmentMode: "", MountOptions: null, PerAlloc: false },
    });
    expect(job.Update).toMatchObject({ MaxParallel: 2, Stagger: 30 * SECOND, HealthCheck: "checks" });
    expect(group.Update).toMatchObject({ MaxParallel: 2 });
    expect(job.Constraints).toEqual([{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }]);
    expect(await problems(`variable "x" {}\n${minimal("")}`)).toEqual([expect.stringContaining('variable["x"]: unset variable "x"')]);
  });

  test("any driver, type and network mode parses; registering decides what runs", async () => {
    const text = `
job "j" {
  type = "system"
  group "g" {
    network {
      mode = "bridge"
    }
    task "t" {
      driver = "docker"
      config {
        image = "redis"
      }
    }
  }
}`;
    const job = await parseJobHcl("docker.hcl", text);
    expect(job.Type).toBe("system");
    expect(job.TaskGroups[0]!.Networks[0]!.Mode).toBe("bridge");
    expect(job.TaskGroups[0]!.Tasks[0]).toMatchObject({ Driver: "docker", Config: { image: "redis" } });
  });

  test("unknown names, bad values and broken rules name the field by its HCL path", async () => {
    expect(await problems(minimal("colour = 1"))).toContain('job.group["g"].task["t"].colour: unknown attribute');
    expect(await problems(minimal('resources {\n memory = "lots"\n }'))).toContain('job.group["g"].task["t"].resources.memory: expected number, got "lots"');
    expect(await problems(minimal("resources {\n memory = 5\n }"))).toContain('job.group["g"].task["t"].resources.memory: expected at least 10, got 5');
    expect(await problems(minimal('kill_timeout = "soon"'))).toEqual([expect.stringMatching(/^job\.group\["g"\]\.task\["t"\]\.kill_timeout: invalid duration "soon"/)]);
    expect(await problems(minimal("", 'count = 1 + "x"'))).toEqual([expect.stringContaining('job.group["g"].count: the right operand of +: a number is required, got a string')]);
    expect(await problems(minimal('env {\n X = upper(var.y)\n }'))).toEqual(['job.group["g"].task["t"].env.X: var.y: no variable "y" is declared']);
    expect(await problems(minimal('kill_signal = "SIGNOPE"'))).toContain('job.group["g"].task["t"].kill_signal: unknown signal "SIGNOPE"');
    expect(await problems(minimal('restart {\n attempts = 10\n delay = "1m"\n interval = "5m"\n }'))).toContain(
      'job.group["g"].task["t"].restart: 10 restarts with a delay of 1m0s do not fit in an interval of 5m0s',
    );
    // The log pump's own bounds: a job the server accepts never fails on the node for its logs.
    expect(await problems(minimal("logs {\n max_files = 20000\n }"))).toContain('job.group["g"].task["t"].logs.max_files: expected at most 10000, got 20000');
    expect(await problems(minimal("logs {\n max_files = 40\n }"))).toEqual([expect.stringMatching(/^job\.group\["g"\]\.task\["t"\]\.logs: log storage \(400 MB/)]);
    expect(await problems(minimal("", 'network {\n port "a" {}\n port "b" {\n static = 70000\n }\n }'))).toContain(
      'job.group["g"].network[0].port["b"].static: expected at most 65535, got 70000',
    );
  });

  test("log storage is checked per task against the disk, as Nomad's LogConfig.Validate does", async () => {
    // Five tasks with the default logs (10 x 10 MB each) fit the default 300 MB disk in Nomad: 100 MB each, not 500 summed.
    const tasks = [1, 2, 3, 4, 5].map((n) => `task "t${n}" {\n driver = "raw_exec"\n config {\n command = "/bin/true"\n }\n }`).join("\n");
    const job = await parseJobFile("job.hcl", `job "j" {\n group "g" {\n ${tasks}\n }\n}`);
    expect(job.TaskGroups[0]!.Tasks).toHaveLength(5);
    expect(await problems(minimal("logs {\n max_files = 30\n }"))).toEqual([
      'job.group["g"].task["t"].logs: log storage (300 MB: max_files x max_file_size) must be less than the ephemeral disk (300 MB)',
    ]);
  });

  test("the exec driver's Nomad 1.x keys are accepted; a bad mode or capability names the field", async () => {
    const exec = (config: string) => `job "j" {\n group "g" {\n task "t" {\n driver = "exec"\n config {\n command = "/bin/true"\n ${config}\n }\n }\n }\n}`;
    const job = await parseJobFile("job.hcl", exec('pid_mode = "host"\n ipc_mode = "private"\n cap_add = ["CAP_NET_RAW"]\n cap_drop = ["all"]'));
    expect(job.TaskGroups[0]!.Tasks[0]!.Config).toMatchObject({ pid_mode: "host", ipc_mode: "private", cap_add: ["CAP_NET_RAW"], cap_drop: ["all"] });
    expect(await problems(exec('pid_mode = "shared"'))).toEqual([expect.stringContaining('job.group["g"].task["t"].config.pid_mode: must be "private" or "host"')]);
    expect(await problems(exec('cap_add = ["sys_everything"]'))).toEqual([expect.stringContaining('job.group["g"].task["t"].config.cap_add.0: must name a Linux capability or "all"')]);
  });

  test("a block written twice is refused rather than merged", async () => {
    expect(await problems(minimal("resources {\n cpu = 1\n }\n resources {\n cpu = 2\n }"))).toContain('job.group["g"].task["t"].resources[1]: only one "resources" block is allowed (found 2)');
    const twice = 'job "j" {\n group "g" {\n task "t" {\n driver = "raw_exec"\n config {\n command = "x"\n }\n }\n task "t" {\n driver = "raw_exec"\n config {\n command = "x"\n }\n }\n }\n}';
    expect(await problems(twice)).toContain('job.group["g"].task["t"]: defined 2 times');
  });

  test("a file without a job block says only that", async () => {
    expect(await problems('# nothing here\n')).toEqual(['no job block: expected job "<name>" { ... }']);
    expect(await problems('variable "x" {\n default = 1\n}\n')).toEqual(['no job block: expected job "<name>" { ... }']);
  });

  test("a config the raw_exec and exec drivers cannot read is refused on register", async () => {
    expect(await problems(minimal("", "", "").replace('command = "/bin/true"', 'comand = "/bin/true"'))).toEqual(
      expect.arrayContaining(['job.group["g"].task["t"].config.comand: unknown field (the raw_exec driver takes command and args)']),
    );
  });

  test("a docker config: Nomad's auth, ulimit and sysctl blocks read, keys drover does not serve are refused by name", async () => {
    const docker = (config: string) => `job "j" {\n group "g" {\n task "t" {\n driver = "docker"\n config {\n${config}\n }\n }\n }\n}`;
    const job = await parseJobFile("job.hcl", docker('image = "redis:7"\n auth {\n username = "u"\n password = "p"\n }\n ports = ["db"]'));
    expect(job.TaskGroups[0]!.Tasks[0]!.Config).toMatchObject({ image: "redis:7", ports: ["db"] });
    expect(await problems(docker('image = "redis"\n security_opt = ["seccomp=unconfined"]'))).toEqual([
      'job.group["g"].task["t"].config.security_opt: unknown field (not one the docker driver takes on drover: see docs/docker-driver.md)',
    ]);
    const limits = await parseJobFile("job.hcl", docker('image = "redis"\n cap_add = ["net_admin"]\n ulimit {\n nofile = "1024:2048"\n }\n sysctl = {\n "kernel.shmmax" = "1048576"\n }\n shm_size = 1024'));
    expect(limits.TaskGroups[0]!.Tasks[0]!.Config).toMatchObject({ cap_add: ["net_admin"], ulimit: [{ nofile: "1024:2048" }], sysctl: { "kernel.shmmax": "1048576" }, shm_size: 1024 });
    expect(await problems(docker('image = "redis"\n sysctl = {\n "kernel.panic" = "1"\n }'))).toEqual([
      expect.stringContaining('job.group["g"].task["t"].config.sysctl.kernel.panic: only namespaced sysctls may be set'),
    ]);
    expect((await parseJobFile("job.hcl", docker('image = "redis"\n network_mode = "none"'))).TaskGroups[0]!.Tasks[0]!.Config).toMatchObject({ network_mode: "none" });
    expect(await problems(docker('image = "redis"\n network_mode = "overlay"'))).toEqual([
      `job.group["g"].task["t"].config.network_mode: must be "host", "none" or "bridge" (the group's bridge network)`,
    ]);
    expect(await problems(docker('command = "redis-server"'))).toEqual(['job.group["g"].task["t"].config.image: is required']);
  });

  test("bridge mode: any driver; docker's network_mode \"bridge\" and a group hostname need a bridge group (hostname: docker only)", async () => {
    const group = (network: string, driver: string, config: string) =>
      `job "j" {\n group "g" {\n network {\n${network}\n }\n task "t" {\n driver = "${driver}"\n config {\n${config}\n }\n }\n }\n}`;
    const bridge = await parseJobFile("job.hcl", group('mode = "bridge"\n port "http" {\n to = 8080\n }', "raw_exec", 'command = "x"'));
    expect(bridge.TaskGroups[0]!.Networks[0]).toMatchObject({ Mode: "bridge", DynamicPorts: [{ Label: "http", To: 8080 }] });
    expect(await problems(group('mode = "host"', "docker", 'image = "redis"\n network_mode = "bridge"'))).toEqual([
      `job.group["g"].task["t"].config.network_mode: "bridge" joins the group's bridge network: set network { mode = "bridge" } on the group`,
    ]);
    expect(await problems(group('mode = "bridge"\n hostname = "box"', "exec", 'command = "x"'))).toEqual([
      'job.group["g"].network[0].hostname: a group network hostname needs mode "bridge" and docker tasks only',
    ]);
    await parseJobFile("job.hcl", group('mode = "bridge"\n hostname = "box"', "docker", 'image = "redis"\n network_mode = "bridge"'));
  });

  test("a volume_mount's destination must be a place in the task's root; a host volume needs a source", async () => {
    const group = 'volume "v" {\n type = "host"\n source = "shared"\n }';
    const mount = (destination: string) => `volume_mount {\n volume = "v"\n destination = "${destination}"\n }`;
    expect(await problems(minimal(mount("../etc"), group))).toEqual(['job.group["g"].task["t"].volume_mount[0].destination: must not contain ".." components']);
    expect(await problems(minimal(mount("/proc/sys"), group))).toEqual(['job.group["g"].task["t"].volume_mount[0].destination: must not be on or under /proc']);
    expect(await problems(minimal(mount("/local"), group))).toEqual(['job.group["g"].task["t"].volume_mount[0].destination: must not be /local itself (a path below it is fine)']);
    expect(await problems(minimal(mount("/srv/data").replace('"v"', '"w"'), group))).toEqual(['job.group["g"].task["t"].volume_mount[0].volume: volume "w" is not a volume of the group']);
    expect(await problems(minimal("", 'volume "v" {\n type = "host"\n }'))).toEqual(['job.group["g"].volume["v"].source: a host volume needs a source']);
    await parseJobFile("job.hcl", minimal(mount("local/data"), group));
  });

  test("every problem of a file is reported at once", async () => {
    const found = await problems(minimal('kill_timeout = "soon"\n resources {\n memory = 1\n }'));
    expect(found.length).toBeGreaterThanOrEqual(2);
  });
});

describe("JSON job files and API bodies", () => {
  test("an HCL job survives the JSON round trip unchanged", async () => {
    const job = await parseJobHcl("example.hcl", EXAMPLE);
    expect(parseJobJson("example.json", JSON.stringify({ Job: job }))).toEqual(job);
    expect(parseJobJson("bare.json", JSON.stringify(job))).toEqual(job);
  });

  test("Nomad 0.12's own job JSON is read whole: update, migrate and reschedule are kept", () => {
    const text = readFileSync(join(import.meta.dir, "fixtures/nomad-0.12-job.json"), "utf8");
    const job = parseJobJson("nomad.json", text);
    // The legacy job-level update Nomad 0.12's server answered with: its zero fields stay zero.
    expect(job.Update).toMatchObject({ MaxParallel: 1, Stagger: 30 * SECOND, HealthCheck: "" });
    expect(job.TaskGroups[0]!.Migrate).toMatchObject({ MaxParallel: 1 });
    expect(job.TaskGroups[0]!.ReschedulePolicy).toMatchObject({ DelayFunction: "exponential", Unlimited: true });
    expect(job.TaskGroups[0]!.Tasks[0]!.Env).toEqual({ FOO: "bar-${NOMAD_ALLOC_INDEX}" });
    expect(job.TaskGroups[0]!.Networks[0]!.DynamicPorts).toEqual([{ Label: "http", Value: 0, To: 0, HostNetwork: "default", IgnoreCollision: false }]);
    // Server-set fields of the sample are dropped, not trusted.
    expect(job.CreateIndex).toBe(0);
  });

  test("problems name the JSON field path", () => {
    const body = {
      Job: {
        ID: "j",
        Bogus: 1,
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "x" }, Resources: { MemoryMB: "x" } }] }],
      },
    };
    const err = (() => {
      try {
        parseJobJson("job.json", JSON.stringify(body));
      } catch (e) {
        return e as ValidationError;
      }
    })();
    expect(err?.problems).toEqual(
      expect.arrayContaining(['Job.Bogus: unknown field', 'Job.TaskGroups["g"].Tasks["t"].Resources.MemoryMB: expected number, got "x"']),
    );
    expect(() => parseJobJson("bad.json", "{nope")).toThrow(/^bad\.json:1,2: invalid JSON/);
    expect(() => parseJobJson("missing.json", JSON.stringify({ Job: { ID: "j" } }))).toThrow(/^missing\.json:1,2: Job\.TaskGroups: a job needs at least one group$/);
    // Parsing alone (POST /v1/jobs/parse) checks shapes, as Nomad's parser does.
    expect(parseJobJson("missing.json", JSON.stringify({ Job: { ID: "j" } }), { validate: false }).TaskGroups).toEqual([]);
  });
});

describe("network mode none", () => {
  const hcl = (driver: string, port = "") => `job "j" {\n group "g" {\n network {\n mode = "none"\n ${port}\n }\n task "t" {\n driver = "${driver}"\n config {\n command = "x"\n }\n }\n }\n}`;

  test("is accepted for exec tasks", async () => {
    const job = await parseJobFile("none.hcl", hcl("exec"));
    expect(job.TaskGroups[0]!.Networks[0]!.Mode).toBe("none");
  });

  test("is refused for raw_exec, which cannot isolate a network, and with ports", async () => {
    const error = (await parseJobFile("none.hcl", hcl("raw_exec", 'port "http" {}')).then(
      () => new Error("accepted"),
      (err: unknown) => err as Error,
    )) as Error;
    expect(error.message).toContain('network mode "none" needs the exec driver: task "t" uses raw_exec');
    expect(error.message).toContain('ports need network mode "host"');
  });
});

describe("every problem names its file, line and column", () => {
  /** The lines the CLI prints: one per problem, `file:line,col: path: message`. */
  async function lines(text: string, file = "job.hcl"): Promise<string[]> {
    const err = await parseJobFile(file, text).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof ValidationError)) throw new Error(`expected a ValidationError, got ${String(err)}`);
    return err.lines();
  }

  test("unknown keys, wrong types and missing fields in HCL", async () => {
    const text = [
      'job "j" {', //                           1
      "  # a comment with { and \"quotes\"", // 2
      '  group "g" {', //                       3
      "    count = \"two\"", //                 4
      '    task "t" {', //                      5
      '      driver = "raw_exec"', //           6
      "      config {", //                      7
      "        args = [\"}\", <<EOT", //        8
      "{ not a block", //                       9
      "EOT", //                                 10
      "        ]", //                           11
      "      }", //                             12
      "      colour = 1", //                    13
      "      env = { A = \"x\", B = upper(var.y) }", // 14
      "    }", //                               15
      "  }", //                                 16
      "}", //                                   17
    ].join("\n");
    expect((await lines(text)).sort()).toEqual(
      [
        'job.hcl:4,5: job.group["g"].count: expected number, got "two"',
        'job.hcl:13,7: job.group["g"].task["t"].colour: unknown attribute',
        'job.hcl:14,24: job.group["g"].task["t"].env.B: var.y: no variable "y" is declared',
      ].sort(),
    );
  });

  test("a block written twice points at the second; a missing field at the block that lacks it", async () => {
    const text = 'job "j" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      resources { cpu = 1 }\n      resources { cpu = 2 }\n    }\n  }\n}\n';
    expect(await lines(text)).toContain('job.hcl:6,7: job.group["g"].task["t"].resources[1]: only one "resources" block is allowed (found 2)');
    const noGroup = await lines('job "j" {\n  datacenters = ["dc1"]\n}\n');
    expect(noGroup).toEqual([expect.stringMatching(/^job\.hcl:1,1: job\.group: /)]);
  });

  test("syntax errors and whole-file problems use the same format", async () => {
    expect(await lines('job "x" {\n  group "g" {\n    count = \n  }\n}\n', "broken.hcl")).toEqual([
      expect.stringMatching(/^broken\.hcl:3,13: Invalid expression; /),
    ]);
    expect(await lines("# nothing\n")).toEqual(['job.hcl:1,1: no job block: expected job "<name>" { ... }']);
  });

  test("JSON job files: the field's own line, found through labelled lists", async () => {
    const body = { Job: { ID: "j", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "x" }, Resources: { MemoryMB: "x" } }] }] } };
    const text = JSON.stringify(body, null, 2);
    const lineOf = (needle: string) => text.split("\n").findIndex((line) => line.includes(needle)) + 1;
    expect(await lines(text, "job.json")).toEqual([
      `job.json:${lineOf('"MemoryMB"')},15: Job.TaskGroups["g"].Tasks["t"].Resources.MemoryMB: expected number, got "x"`,
    ]);
    expect(await lines('{\n  "Job": {\n    "ID": "j",\n  }', "bad.json")).toEqual([expect.stringMatching(/^bad\.json:4,3: invalid JSON: /)]);
  });
});
