/**
 * Nomad 1.x's job specification: every block and attribute Nomad 1.x added
 * parses into Nomad's 1.x API job (from HCL and from API JSON), is kept by
 * the server, and what drover's client does not do is refused at task start
 * with the reason. Nomad 1.6's own files (fixtures/nomad-1.6/README.md) are
 * read with the values Nomad's parser gives them (jobspec2/parse_test.go).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../../src/api/app.ts";
import { serverRoutes } from "../../src/api/routes/server.ts";
import { unsupportedBlocks } from "../../src/client/taskrunner/hooks/validate.ts";
import { parseJobHcl, parseJobJson } from "../../src/jobspec/index.ts";
import type { Job } from "../../src/structs/job.ts";
import { openTestServer, testNode } from "../server/fixtures.ts";

const SECOND = 1e9;
const DIR = join(import.meta.dir, "fixtures/nomad-1.6");
const parse = (path: string, validate = false) => parseJobHcl(path, readFileSync(join(DIR, path), "utf8"), { validate });

describe("Nomad 1.6's own job files", () => {
  test("identity: the unnamed block is the task's default identity", async () => {
    const job = await parse("command/asset/example.nomad.hcl", true);
    const task = job.TaskGroups[0]!.Tasks[0]!;
    expect(task.Identity).toMatchObject({ Name: "", Env: true, File: true });
    expect(task.Identities).toEqual([]);
    expect(job.NodePool).toBe("default");
  });

  test("Nomad 1.6's own API JSON of a job (nulls for what it leaves unset) reads into the job its HCL makes", async () => {
    const json = parseJobJson("example-short.json", readFileSync(join(DIR, "command/testdata/example-short.json"), "utf8"));
    expect(json.TaskGroups[0]!.Tasks[0]!.Resources).toMatchObject({ CPU: 500, Cores: 0, NUMA: null, SecretsMB: null });
    // The JSON predates the asset's identity block, and names dc1 where the asset now leaves datacenters out.
    const text = readFileSync(join(DIR, "command/asset/example-short.nomad.hcl"), "utf8").replace(/identity \{[^}]*\}/, "");
    const hcl = await parseJobHcl("example-short.nomad.hcl", text.replace('group "cache"', 'datacenters = ["dc1"]\n  group "cache"'));
    expect(hcl).toEqual(json);
  });

  test("identity-compat (Nomad 1.10's jobspec2 fixture): the default identity and a named one", async () => {
    const task = (await parse("jobspec2/test-fixtures/identity-compat.nomad.hcl")).TaskGroups[0]!.Tasks[0]!;
    expect(task.Identity).toMatchObject({ Env: true, File: true });
    expect(task.Identities).toEqual([
      { Name: "foo", Audience: ["bar"], ChangeMode: "signal", ChangeSignal: "sighup", Env: false, File: true, Filepath: "", ServiceName: "", TTL: 2 * 3600 * SECOND },
    ]);
  });

  test("identity blocks of every kind (workload_id e2e)", async () => {
    const job = await parse("e2e/workload_id/input/identity.nomad");
    const byTask = Object.fromEntries(job.TaskGroups[0]!.Tasks.map((task) => [task.Name, task.Identity]));
    expect(byTask.none).toBeNull();
    expect(byTask.empty).toMatchObject({ Env: false, File: false });
    expect(byTask.env).toMatchObject({ Env: true, File: false });
    expect(byTask.file).toMatchObject({ Env: false, File: true });
  });

  test("CSI volume: access and attachment modes, per_alloc", async () => {
    const job = await parse("demo/csi/hostpath/redis.nomad");
    expect(job.TaskGroups[0]!.Volumes.volume0).toEqual({
      Name: "volume0",
      Type: "csi",
      Source: "test-volume",
      ReadOnly: true,
      Sticky: false,
      AccessMode: "single-node-reader-only",
      AttachmentMode: "file-system",
      MountOptions: null,
      PerAlloc: true,
    });
  });

  test("volume requests are checked as Nomad checks them on register", async () => {
    await parse("demo/csi/hostpath/redis.nomad", true);
    const text = readFileSync(join(DIR, "demo/csi/hostpath/redis.nomad"), "utf8");
    const noModes = text.replace(/\s*attachment_mode = .*\n/, "\n").replace(/\s*access_mode\s*= .*\n/, "\n");
    await expect(parseJobHcl("redis.nomad", noModes)).rejects.toThrow(
      /volume\["volume0"\]\.attachment_mode: CSI volumes must have an attachment mode.*volume\["volume0"\]\.access_mode: CSI volumes must have an access mode/,
    );
    const writable = text.replace("read_only       = true", "read_only       = false");
    await expect(parseJobHcl("redis.nomad", writable)).rejects.toThrow(/volume\["volume0"\]\.read_only: single-node-reader-only volumes must be read-only/);
  });

  test("csi_plugin with Nomad 1.x's defaults", async () => {
    const job = await parse("e2e/csi/input/plugin-aws-ebs-nodes.nomad");
    const plugin = job.TaskGroups.flatMap((group) => group.Tasks).find((task) => task.CSIPluginConfig)!.CSIPluginConfig;
    expect(plugin).toEqual({ ID: "aws-ebs0", Type: "node", MountDir: "/csi", StagePublishBaseDir: "/local/csi", HealthTimeout: 30 * SECOND });
  });

  test("connect terminating and ingress gateways", async () => {
    const terminating = await parse("e2e/connect/input/terminating-gateway.nomad");
    const gateway = terminating.TaskGroups.flatMap((group) => group.Services).find((service) => service.Connect?.Gateway)!.Connect!.Gateway!;
    expect(gateway.Terminating).toEqual({ Services: [{ Name: "count-api", CAFile: "", CertFile: "", KeyFile: "", SNI: "" }] });
    const ingress = await parse("e2e/connect/input/ingress-gateway.nomad");
    const listeners = ingress.TaskGroups.flatMap((group) => group.Services).find((service) => service.Connect?.Gateway)!.Connect!.Gateway!.Ingress!.Listeners;
    expect(listeners[0]!.Services[0]).toMatchObject({ TLS: null, RequestHeaders: null, MaxConnections: null });
  });

  test("group consul namespace, port labels with dashes, services' Nomad 1.x defaults", async () => {
    const job = await parse("e2e/consul/input/namespaces/services_group.nomad", true);
    const group = job.TaskGroups.find((g) => g.Consul?.Namespace === "banana")!;
    expect(group.Consul).toEqual({ Namespace: "banana", Cluster: "default", Partition: "" });
    expect(group.Networks[0]!.DynamicPorts[0]).toMatchObject({ Label: "port-b", To: 1234, IgnoreCollision: false });
    expect(group.Services[0]).toMatchObject({ Provider: "consul", OnUpdate: "require_healthy", Cluster: "default" });
  });

  test("check on_update, max_client_disconnect, network hostname", async () => {
    const onUpdate = await parse("e2e/consul/input/on_update.nomad");
    const checks = onUpdate.TaskGroups[0]!.Services.flatMap((service) => service.Checks);
    expect(checks.map((check) => check.OnUpdate)).toContain("ignore_warnings");
    expect(checks.map((check) => check.OnUpdate)).toContain("require_healthy");
    const disconnect = await parse("e2e/disconnectedclients/input/lost_max_disconnect.nomad");
    expect(disconnect.TaskGroups[0]!.MaxClientDisconnect).toBe(3600 * SECOND);
    const hostname = await parse("e2e/networking/inputs/docker_bridged_hostname.nomad");
    expect(hostname.TaskGroups[0]!.Networks[0]).toMatchObject({ Mode: "bridge", Hostname: "mylittlepony" });
  });

  test("jobspec2's fixtures: restart render_templates, template wait and error_on_missing_key", async () => {
    const restart = await parse("jobspec2/test-fixtures/restart-render-templates.hcl");
    const [foo, bar] = restart.TaskGroups[0]!.Tasks;
    expect(restart.TaskGroups[0]!.RestartPolicy.RenderTemplates).toBe(true);
    expect(foo!.RestartPolicy.RenderTemplates).toBe(true);
    expect(bar!.RestartPolicy.RenderTemplates).toBe(false);
    const wait = await parse("jobspec2/test-fixtures/template-wait-config.hcl");
    expect(wait.TaskGroups[0]!.Tasks[0]!.Templates[0]!.Wait).toEqual({ Min: 5 * SECOND, Max: 60 * SECOND });
    const missingKey = await parse("jobspec2/test-fixtures/template-err-missing-key.hcl");
    expect(missingKey.TaskGroups[0]!.Tasks[0]!.Templates[0]!.ErrMissingKey).toBe(true);
  });
});

/** A job with the Nomad 1.x blocks Nomad's own files do not show. */
const NOMAD_1X_JOB = `
job "web" {
  type      = "batch"
  node_pool = "gpu"
  ui {
    description = "The web tier"
    link {
      label = "Docs"
      url   = "https://example.com/docs"
    }
  }
  periodic {
    crons = ["*/5 * * * *", "0 1 * * *"]
  }
  multiregion {
    region "east" {
      count     = 2
      node_pool = "east-pool"
    }
  }
  group "app" {
    disconnect {
      lost_after = "5m"
    }
    prevent_reschedule_on_lost = true
    consul {
      cluster = "infra"
    }
    volume "data" {
      type = "host"
      source = "data"
      sticky = true
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
      resources {
        cores  = 2
        memory = 256
        numa {
          affinity = "require"
        }
      }
      identity {
        name = "vault_default"
        aud  = ["vault.io"]
        ttl  = "1h"
      }
      action "hello" {
        command = "/bin/echo"
        args    = ["hi"]
      }
      schedule {
        cron {
          start    = "0 9 * * mon-fri"
          end      = "0 17"
          timezone = "Europe/Paris"
        }
      }
      scaling "cpu" {
        max = 1000
        policy {
          cooldown = "5m"
        }
      }
      template {
        data        = "x"
        destination = "local/x"
        change_mode = "script"
        change_script {
          command = "/bin/reload"
        }
        once = true
        uid  = 1000
      }
      artifact {
        source  = "https://example.com/a.tgz"
        headers {
          Authorization = "Bearer x"
        }
        chown = true
      }
      vault {
        role    = "web"
        cluster = "secondary"
      }
      volume_mount {
        volume        = "data"
        destination   = "/data"
        selinux_label = "z"
      }
      logs {
        disabled = true
      }
      env {
        UPSTREAM = "http://\${NOMAD_UPSTREAM_ADDR_count-api}"
      }
      service {
        name     = "web"
        provider = "nomad"
        address  = "10.0.0.1"
        tagged_addresses {
          lan = "10.0.0.1"
        }
        check {
          type      = "http"
          path      = "/health"
          interval  = "10s"
          timeout   = "2s"
          body      = "ping"
          on_update = "ignore"
        }
      }
    }
    service {
      name = "mesh"
      connect {
        gateway {
          mesh {}
        }
      }
    }
  }
}
`;

describe("Nomad 1.x blocks beyond Nomad's own files", () => {
  test("each parses into Nomad's 1.x API job, and the job validates", async () => {
    const job = await parseJobHcl("web.hcl", NOMAD_1X_JOB);
    expect(job.NodePool).toBe("gpu");
    expect(job.UI).toEqual({ Description: "The web tier", Links: [{ Label: "Docs", URL: "https://example.com/docs" }] });
    expect(job.Periodic).toMatchObject({ Spec: "", Specs: ["*/5 * * * *", "0 1 * * *"], SpecType: "cron" });
    expect(job.Multiregion!.Regions).toEqual([{ Name: "east", Count: 2, Datacenters: [], NodePool: "east-pool", Meta: {} }]);
    const group = job.TaskGroups[0]!;
    expect(group.Disconnect).toEqual({ LostAfter: 300 * SECOND, StopOnClientAfter: null, Replace: true, Reconcile: "best_score" });
    expect(group.PreventRescheduleOnLost).toBe(true);
    expect(group.Consul).toEqual({ Namespace: "", Cluster: "infra", Partition: "" });
    expect(group.Volumes.data!.Sticky).toBe(true);
    expect(group.Services[0]!.Connect!.Gateway!.Mesh).toEqual({});
    const task = group.Tasks[0]!;
    expect(task.Resources).toMatchObject({ CPU: 0, Cores: 2, MemoryMB: 256, NUMA: { Affinity: "require", Devices: null } });
    expect(task.Identity).toBeNull();
    expect(task.Identities).toEqual([
      { Name: "vault_default", Audience: ["vault.io"], ChangeMode: "", ChangeSignal: "", Env: false, File: false, Filepath: "", ServiceName: "", TTL: 3600 * SECOND },
    ]);
    expect(task.Actions).toEqual([{ Name: "hello", Command: "/bin/echo", Args: ["hi"] }]);
    expect(task.Schedule).toEqual({ Cron: { Start: "0 9 * * mon-fri", End: "0 17", Timezone: "Europe/Paris" } });
    expect(task.ScalingPolicies).toEqual([
      expect.objectContaining({ Type: "vertical_cpu", Max: 1000, Enabled: true, Policy: { cooldown: "5m" } }),
    ]);
    expect(task.Templates[0]).toMatchObject({
      ChangeMode: "script",
      ChangeScript: { Command: "/bin/reload", Args: [], Timeout: 5 * SECOND, FailOnError: false },
      Once: true,
      Uid: 1000,
      Gid: null,
      Wait: null,
      ErrMissingKey: false,
    });
    expect(task.Artifacts[0]).toMatchObject({ GetterHeaders: { Authorization: "Bearer x" }, Chown: true, GetterInsecure: false });
    expect(task.Vault).toMatchObject({ Role: "web", Cluster: "secondary", Env: true, DisableFile: false, AllowTokenExpiration: false });
    expect(task.VolumeMounts[0]).toMatchObject({ SELinuxLabel: "z", PropagationMode: "private" });
    expect(task.LogConfig).toMatchObject({ Disabled: true, Enabled: null, MaxFiles: 10 });
    // HCL2 names may hold dashes: the task runner resolves this one (Connect's upstream address).
    expect(task.Env.UPSTREAM).toBe("http://${NOMAD_UPSTREAM_ADDR_count-api}");
    expect(task.Services[0]).toMatchObject({ Provider: "nomad", Address: "10.0.0.1", TaggedAddresses: { lan: "10.0.0.1" }, OnUpdate: "require_healthy" });
    expect(task.Services[0]!.Checks[0]).toMatchObject({ Body: "ping", OnUpdate: "ignore", FailuresBeforeWarning: 0 });
  });

  test("network cni and ignore_collision, CSI mount_options, numa devices, secrets", async () => {
    const job = await parseJobHcl("m.hcl", `job "m" {
  group "g" {
    network {
      mode = "cni/mynet"
      cni {
        args = {
          IgnoreUnknown = "true"
        }
      }
      port "p" {
        static = 8000
        ignore_collision = true
      }
    }
    volume "v" {
      type = "csi"
      source = "vol"
      access_mode = "single-node-writer"
      attachment_mode = "file-system"
      mount_options {
        fs_type = "ext4"
        mount_flags = ["noatime"]
      }
    }
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      resources {
        cpu = 100
        secrets = 64
        numa {
          affinity = "prefer"
          devices = ["nvidia/gpu"]
        }
      }
    }
  }
}
`);
    const group = job.TaskGroups[0]!;
    expect(group.Networks[0]).toMatchObject({ Mode: "cni/mynet", CNI: { Args: { IgnoreUnknown: "true" } } });
    expect(group.Networks[0]!.ReservedPorts).toEqual([{ Label: "p", Value: 8000, To: 0, HostNetwork: "default", IgnoreCollision: true }]);
    expect(group.Volumes.v!.MountOptions).toEqual({ FSType: "ext4", MountFlags: ["noatime"] });
    expect(group.Tasks[0]!.Resources).toMatchObject({ SecretsMB: 64, NUMA: { Affinity: "prefer", Devices: ["nvidia/gpu"] } });
  });

  test("a task's scaling block is named cpu or mem, once each", async () => {
    const bad = NOMAD_1X_JOB.replace('scaling "cpu"', 'scaling "disk"');
    await expect(parseJobHcl("web.hcl", bad, { validate: false })).rejects.toThrow(/task\["server"\]\.scaling\["disk"\]: scaling policy name must be "cpu" or "mem"/);
  });

  test("Nomad's rules for the new fields are checked on register", async () => {
    const both = NOMAD_1X_JOB.replace("cores  = 2", "cores  = 2\n        cpu = 500");
    await expect(parseJobHcl("web.hcl", both)).rejects.toThrow(/resources\.cores: a task asks for cpu or cores, not both/);
    const noScript = NOMAD_1X_JOB.replace('change_script {\n          command = "/bin/reload"\n        }', "");
    await expect(parseJobHcl("web.hcl", noScript)).rejects.toThrow(/template\[0\]\.change_script: change_mode "script" needs a change_script block/);
    const reconcile = NOMAD_1X_JOB.replace('lost_after = "5m"', 'lost_after = "5m"\n      reconcile = "newest"');
    await expect(parseJobHcl("web.hcl", reconcile)).rejects.toThrow(/disconnect\.reconcile: invalid reconcile option "newest"/);
    const provider = NOMAD_1X_JOB.replace('provider = "nomad"', 'provider = "etcd"');
    await expect(parseJobHcl("web.hcl", provider)).rejects.toThrow(/service\["web"\]\.provider: service provider must be "consul" or "nomad", not "etcd"/);
    const identity = NOMAD_1X_JOB.replace('ttl  = "1h"', 'ttl  = "1h"\n        filepath = "x"\n        change_mode = "signal"');
    await expect(parseJobHcl("web.hcl", identity)).rejects.toThrow(
      /identity\["vault_default"\]\.change_signal: change_signal must be specified when using change_mode "signal".*identity\["vault_default"\]\.filepath: file must be true to set filepath/,
    );
    const defaultTtl = NOMAD_1X_JOB.replace('name = "vault_default"', "");
    await expect(parseJobHcl("web.hcl", defaultTtl)).rejects.toThrow(/web\.hcl:\d+,\d+: job\.group\["app"\]\.task\["server"\]\.identity\.ttl: ttl for the default identity is not supported/);
    const actions = NOMAD_1X_JOB.replace('action "hello" {', 'action "hello" {\n        command = "/bin/true"\n      }\n      action "hello" {');
    await expect(parseJobHcl("web.hcl", actions)).rejects.toThrow(/action\["hello"\]: defined 2 times/);
    const wait = NOMAD_1X_JOB.replace("once = true", 'once = true\n        wait {\n          min = "10s"\n          max = "5s"\n        }');
    await expect(parseJobHcl("web.hcl", wait)).rejects.toThrow(/template\[0\]\.wait: wait min 10s is greater than max 5s/);
    const onUpdate = NOMAD_1X_JOB.replace('on_update = "ignore"', 'on_update = "sometimes"');
    await expect(parseJobHcl("web.hcl", onUpdate)).rejects.toThrow(/check\[0\]\.on_update: on_update must be one of require_healthy, ignore_warnings, ignore/);
  });

  test("the same job as API JSON, in Nomad's spelling, reads into the same job", async () => {
    const job = await parseJobHcl("web.hcl", NOMAD_1X_JOB);
    expect(parseJobJson("web.json", JSON.stringify({ Job: job }))).toEqual(job);
  });

  test("what drover's client does not do is refused at task start, naming each block", async () => {
    const job = await parseJobHcl("web.hcl", NOMAD_1X_JOB);
    const group = job.TaskGroups[0]!;
    const reasons = unsupportedBlocks(group.Tasks[0]!, group);
    expect(reasons).toEqual(
      expect.arrayContaining([
        '"cores" reserves whole CPU cores, which drover does not do (use "cpu")',
        'the "numa" block is not supported by drover',
        'the "schedule" block is not supported by drover',
        'template 0: change_mode "script" is not supported by drover (use "restart", "signal" or "noop")',
        'template 0: "uid" and "gid" are not supported by drover (the file belongs to the task\'s user)',
        'artifact 0: "headers" are not supported by drover',
        'artifact 0: "chown" is not supported by drover',
        'the "connect" block needs Consul Connect, which drover does not have',
      ]),
    );
    const example = await parse("command/asset/example.nomad.hcl");
    const exampleGroup = example.TaskGroups[0]!;
    // drover issues the default identity's token and named ones' alike; only a token file of the operator's choosing is refused.
    const exampleTask = exampleGroup.Tasks[0]!;
    expect(exampleTask.Identity).toMatchObject({ Env: true });
    expect(unsupportedBlocks(exampleTask, exampleGroup).filter((reason) => reason.includes("identity"))).toEqual([]);
    const named = { ...exampleTask, Identities: [{ ...exampleTask.Identity!, Name: "vault", File: true }] };
    expect(unsupportedBlocks(named, exampleGroup).filter((reason) => reason.includes("identity"))).toEqual([]);
    const placed = { ...exampleTask, Identities: [{ ...exampleTask.Identity!, Name: "vault", File: true, Filepath: "local/vault.jwt" }] };
    expect(unsupportedBlocks(placed, exampleGroup)).toContain(`identity "vault": "filepath" is not supported by drover (the token is in secrets/)`);
  });
});

/** Connect's Nomad 1.x blocks: transparent proxy, peered upstreams, gateway TLS and headers. */
const CONNECT_1X_JOB = `
job "c" {
  group "g" {
    network {
      mode = "bridge"
      port "http" {
        to = 8080
      }
    }
    service {
      name = "api"
      port = "http"
      identity {
        aud = ["consul.io"]
      }
      weights {
        passing = 3
      }
      connect {
        sidecar_service {
          disable_default_tcp_check = true
          meta {
            a = "b"
          }
          proxy {
            transparent_proxy {
              exclude_inbound_ports = ["9000"]
              exclude_outbound_ports = [53]
              no_dns = true
            }
            expose {
              path {
                path = "/health"
                protocol = "http"
                local_path_port = 8080
                listener_port = "http"
              }
            }
            upstreams {
              destination_name = "db"
              local_bind_port = 5432
              destination_peer = "other"
              mesh_gateway {
                mode = "local"
              }
              config {
                protocol = "tcp"
              }
            }
          }
        }
        sidecar_task {
          volume_mount {
            volume = "v"
            destination = "/v"
          }
        }
      }
    }
    service {
      name = "ingress"
      connect {
        gateway {
          proxy {
            envoy_gateway_bind_addresses "web" {
              address = "0.0.0.0"
              port = 8080
            }
            envoy_dns_discovery_type = "STRICT_DNS"
          }
          ingress {
            tls {
              enabled = true
              tls_min_version = "TLSv1_2"
              sds {
                cluster_name = "c"
                cert_resource = "r"
              }
            }
            listener {
              port = 8080
              protocol = "http"
              service {
                name = "api"
                hosts = ["api.example"]
                request_headers {
                  add {
                    X-A = "b"
                  }
                  remove = ["X-C"]
                }
                max_connections = 10
              }
            }
          }
        }
      }
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
`;

describe("Connect's Nomad 1.x blocks", () => {
  test("parse into Nomad's 1.x API shapes, and read back the same from API JSON", async () => {
    const job = await parseJobHcl("c.hcl", CONNECT_1X_JOB, { validate: false });
    const [api, ingress] = job.TaskGroups[0]!.Services;
    const proxy = api!.Connect!.SidecarService!.Proxy!;
    expect(proxy.TransparentProxy).toMatchObject({ ExcludeInboundPorts: ["9000"], ExcludeOutboundPorts: [53], NoDNS: true });
    expect(proxy.Upstreams[0]).toMatchObject({ DestinationName: "db", DestinationPeer: "other", MeshGateway: { Mode: "local" }, Config: { protocol: "tcp" } });
    expect(proxy.Expose).toEqual({ Paths: proxy.ExposeConfig!.Path });
    expect(api!.Connect!.SidecarTask).toMatchObject({ KillTimeout: 5 * SECOND, ShutdownDelay: 0, Resources: { CPU: 100, MemoryMB: 300 } });
    expect(api!.Connect!.SidecarTask!.VolumeMounts![0]).toMatchObject({ Volume: "v", PropagationMode: "private" });
    expect(api!.Weights).toEqual({ Passing: 3, Warning: 1 });
    expect(api!.Identity).toMatchObject({ Audience: ["consul.io"] });
    const gateway = ingress!.Connect!.Gateway!;
    expect(gateway.Proxy!.EnvoyGatewayBindAddresses).toEqual({ web: { Name: "web", Address: "0.0.0.0", Port: 8080 } });
    expect(gateway.Ingress!.TLS).toMatchObject({ Enabled: true, TLSMinVersion: "TLSv1_2", SDS: { ClusterName: "c", CertResource: "r" } });
    expect(gateway.Ingress!.Listeners[0]!.Services[0]).toMatchObject({ RequestHeaders: { Add: { "X-A": "b" }, Set: null, Remove: ["X-C"] }, MaxConnections: 10 });
    expect(parseJobJson("c.json", JSON.stringify({ Job: job }), { validate: false })).toEqual(job);
  });
});

describe("through the API", () => {
  const { server } = openTestServer({ freeBytes: () => 1e12 });
  server.nodes.upsert(testNode());
  const app = createApp(pino({ level: "silent" }), serverRoutes(server));
  const send = async <T>(method: string, path: string, body?: unknown) => {
    const res = await app.request(path, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: res.status, body: (res.ok ? await res.json() : await res.text()) as T };
  };

  test("a Nomad 1.x job registers as JSON and GET /v1/job/:id answers with every 1.x field", async () => {
    const parsed = await send<Job>("POST", "/v1/jobs/parse", { JobHCL: NOMAD_1X_JOB.replace('node_pool = "gpu"', 'node_pool = "all"') });
    expect(parsed.status).toBe(200);
    expect((await send("POST", "/v1/jobs", { Job: parsed.body })).status).toBe(200);
    const stored = await send<Job>("GET", "/v1/job/web");
    const serverSet = ["Status", "StatusDescription", "Version", "SubmitTime", "CreateIndex", "ModifyIndex", "JobModifyIndex", "Stable"];
    const strip = (job: Job) => Object.fromEntries(Object.entries(job).filter(([key]) => !serverSet.includes(key)));
    expect(strip(stored.body)).toEqual(strip(parsed.body));
    expect(stored.body.TaskGroups[0]!.Tasks[0]!.Actions).toEqual([{ Name: "hello", Command: "/bin/echo", Args: ["hi"] }]);
  });

  test("a node pool that does not exist is refused on register, naming it", async () => {
    const parsed = await send<Job>("POST", "/v1/jobs/parse", { JobHCL: NOMAD_1X_JOB });
    const registered = await send<string>("POST", "/v1/jobs", { Job: { ...parsed.body, ID: "gpu-web" } });
    expect(registered.status).toBe(400);
    expect(registered.body).toContain('job "gpu-web": job is in nonexistent node pool "gpu"');
  });
});
