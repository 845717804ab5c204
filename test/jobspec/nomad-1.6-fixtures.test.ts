/**
 * The fixtures Nomad 1.6's jobspec added since 0.12 (jobspec/test-fixtures at
 * v1.6.9, which its HCL2 parser reads too): each file Nomad accepts parses
 * into the values its parse_test.go expects, and each it refuses is refused
 * naming the problem.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseJobHcl } from "../../src/jobspec/index.ts";
import type { Job } from "../../src/structs/job.ts";

const SECOND = 1e9;
const DIR = join(import.meta.dir, "fixtures/nomad-1.6/jobspec/test-fixtures");
const parse = (name: string) => parseJobHcl(name, readFileSync(join(DIR, name), "utf8"), { validate: false });

/** What parse_test.go expects of each accepted file (the fields it sets; Nomad's defaults fill the rest). */
const ACCEPTED: Record<string, (job: Job) => void> = {
  "periodic-crons.hcl": (job) =>
    expect(job.Periodic).toMatchObject({ SpecType: "cron", Spec: "", Specs: ["*/5 * * *", "*/7 * * *"], ProhibitOverlap: true, TimeZone: "Europe/Minsk" }),
  "service-tagged-address.hcl": (job) => expect(job.TaskGroups[0]!.Services[0]).toMatchObject({ Name: "service1", TaggedAddresses: { public_wan: "1.2.3.4" } }),
  "tg-service-connect-sidecar_disablecheck.hcl": (job) =>
    expect(job.TaskGroups[0]!.Services[0]!.Connect!.SidecarService).toMatchObject({ DisableDefaultTCPCheck: true }),
  "tg-service-connect-sidecar_meta.hcl": (job) =>
    expect(job.TaskGroups[0]!.Services[0]!.Connect!.SidecarService!.Meta).toEqual({ "test-key": "test-value", "test-key1": "test-value1", "test-key2": "test-value2" }),
  "tg-service-connect-resources.hcl": (job) =>
    expect(job.TaskGroups[0]!.Services[0]!.Connect!.SidecarTask!.Resources).toMatchObject({ CPU: 111, MemoryMB: 222, MemoryMaxMB: 333 }),
  "task-scaling-policy.hcl": (job) =>
    expect(job.TaskGroups[0]!.Tasks[0]!.ScalingPolicies).toEqual([
      expect.objectContaining({ Type: "vertical_cpu", Min: 50, Max: 1000, Policy: { test: "cpu" }, Enabled: true }),
      expect.objectContaining({ Type: "vertical_mem", Min: 128, Max: 1024, Policy: { test: "mem" }, Enabled: false }),
    ]),
  "tg-service-connect-gateway-terminating.hcl": (job) =>
    expect(job.TaskGroups[0]!.Services[0]!.Connect!.Gateway).toMatchObject({
      Proxy: {
        ConnectTimeout: 3 * SECOND,
        EnvoyGatewayBindTaggedAddresses: true,
        EnvoyGatewayBindAddresses: {
          listener1: { Name: "listener1", Address: "10.0.0.1", Port: 8888 },
          listener2: { Name: "listener2", Address: "10.0.0.2", Port: 8889 },
        },
        EnvoyGatewayNoDefaultBind: true,
        EnvoyDNSDiscoveryType: "LOGICAL_DNS",
        Config: { foo: "bar" },
      },
      Terminating: {
        Services: [
          { Name: "service1", CAFile: "ca.pem", CertFile: "cert.pem", KeyFile: "key.pem", SNI: "" },
          { Name: "service2", CAFile: "", CertFile: "", KeyFile: "", SNI: "myhost" },
        ],
      },
      Ingress: null,
      Mesh: null,
    }),
  "tg-service-connect-gateway-mesh.hcl": (job) =>
    expect(job.TaskGroups[0]!.Services[0]!.Connect!.Gateway).toMatchObject({ Proxy: { Config: { foo: "bar" } }, Mesh: {}, Ingress: null, Terminating: null }),
  "consul-namespace.hcl": (job) => expect(job.TaskGroups[0]!.Consul).toEqual({ Namespace: "foo", Cluster: "default", Partition: "" }),
  "resources-cores.hcl": (job) => {
    expect(job.TaskGroups[0]!.Count).toBe(5);
    expect(job.TaskGroups[0]!.Tasks[0]!.Resources).toMatchObject({ Cores: 4, CPU: 0, MemoryMB: 128 });
  },
  "service-provider.hcl": (job) => expect(job.TaskGroups[0]!.Tasks[0]!.Services[0]).toMatchObject({ Name: "service-provider", Provider: "nomad" }),
  "parse-ports.hcl": (job) => {
    const [network] = job.TaskGroups[0]!.Networks;
    expect(network!.ReservedPorts.map((port) => port.Value)).toEqual([9000]);
    expect(network!.DynamicPorts.map((port) => port.Value)).toEqual([0]);
  },
  "tg-network-with-hostname.hcl": (job) =>
    expect(job.TaskGroups[0]!.Networks[0]).toMatchObject({
      Mode: "bridge",
      Hostname: "foobar",
      ReservedPorts: [{ Label: "http", Value: 80, To: 8080, HostNetwork: "public", IgnoreCollision: false }],
    }),
};

/** The files Nomad's parser refuses, and what drover says. */
const REFUSED: Record<string, RegExp> = {
  "task-scaling-policy-invalid-resource.hcl": /scaling\["wrong"\]: scaling policy name must be "cpu" or "mem"/,
  "task-scaling-policy-invalid-type.hcl": /scaling\["cpu"\]\.type: expected "vertical_cpu" for a "cpu" policy, got "vertical_mem"/,
  "task-scaling-policy-missing-name.hcl": /task\["bar"\]\.scaling: expected scaling "<label>" \{ \.\.\. \} blocks/,
  "task-scaling-policy-multi-cpu.hcl": /scaling\["cpu"\]: defined 2 times/,
  "task-scaling-policy-multi-name.hcl": /task\["bar"\]\.scaling\["cpu"\]: one label expected, found another \("mem"\)/,
  "tg-scaling-policy-invalid-type.hcl": /group\["group"\]\.scaling\.type: task group scaling policy had invalid type: "vertical_cpu"/,
  "tg-scaling-policy-with-label.hcl": /group\["group"\]\.scaling\.no-label-allowed: unknown block/,
};

describe("Nomad 1.6's jobspec fixtures it accepts", () => {
  for (const [name, check] of Object.entries(ACCEPTED)) {
    test(name, async () => check(await parse(name)));
  }
});

describe("Nomad 1.6's jobspec fixtures it refuses", () => {
  for (const [name, message] of Object.entries(REFUSED)) {
    test(name, async () => {
      await expect(parse(name)).rejects.toThrow(message);
    });
  }
});
