/**
 * Placement of groups that ask for host volumes: Nomad's HostVolumeChecker.
 * A node without the named volume, or with it read-only for a group that
 * asks to write, is filtered, and the failure says so in Nomad's words.
 */
import { describe, expect, test } from "bun:test";
import { hostVolumeProblem } from "../../src/server/scheduler/host-volumes.ts";
import type { NodeRegistration } from "../../src/structs/node.ts";
import { openTestServer, testJob, testNode } from "./fixtures.ts";

const OFFERED: NodeRegistration["HostVolumes"] = {
  shared: { Name: "shared", Path: "/srv/shared", ReadOnly: false },
  certs: { Name: "certs", Path: "/etc/ssl/certs", ReadOnly: true },
};

/** testJob whose group asks for `volumes` (API JSON, as `volume` blocks give). */
function volumeJob(id: string, volumes: Record<string, { Type?: string; Source: string; ReadOnly?: boolean }>): Record<string, unknown> {
  const job = testJob(id);
  const group = (job.TaskGroups as Record<string, unknown>[])[0]!;
  group.Volumes = Object.fromEntries(Object.entries(volumes).map(([name, volume]) => [name, { Type: "host", ReadOnly: false, ...volume }]));
  return job;
}

function setup(volumes: NodeRegistration["HostVolumes"]) {
  const { server } = openTestServer();
  const node = testNode({ HostVolumes: volumes });
  server.nodes.upsert(node);
  const live = (jobId: string) => server.nodes.allocations(node.ID).filter((alloc) => alloc.JobID === jobId && alloc.DesiredStatus === "run");
  return { server, node, live };
}

describe("host volume placement", () => {
  test("a group is placed on a node that offers its volumes; read-only requests fit read-only volumes", () => {
    const { server, live } = setup(OFFERED);
    server.jobs.register(volumeJob("rw", { data: { Source: "shared" } }));
    server.jobs.register(volumeJob("ro", { data: { Source: "shared", ReadOnly: true }, certs: { Source: "certs", ReadOnly: true } }));
    expect(live("rw")).toHaveLength(1);
    expect(live("ro")).toHaveLength(1);
  });

  test("a missing volume, or a read-write request on a read-only one, is not placed: \"missing compatible host volumes\"", () => {
    const { server, live } = setup(OFFERED);
    for (const [id, volumes] of [
      ["missing", { data: { Source: "nope" } }],
      ["writes-certs", { certs: { Source: "certs" } }],
    ] as const) {
      const response = server.jobs.register(volumeJob(id, volumes));
      expect(live(id)).toHaveLength(0);
      expect(server.evals.get(response.EvalID).FailedTGAllocs?.web).toMatchObject({
        NodesEvaluated: 1,
        NodesFiltered: 1,
        ConstraintFiltered: { "missing compatible host volumes": 1 },
      });
    }
  });

  test("a waiting group is placed once the node comes back offering the volume", () => {
    const { server, node, live } = setup({});
    server.jobs.register(volumeJob("later", { data: { Source: "shared" } }));
    expect(live("later")).toHaveLength(0);
    server.nodes.upsert({ ...node, HostVolumes: OFFERED });
    expect(live("later")).toHaveLength(1);
  });
});

test("only host volumes are the node's to judge; a CSI request is left to the client, which refuses it by name", () => {
  expect(hostVolumeProblem({ HostVolumes: {} }, { Volumes: { db: { Name: "db", Type: "csi", Source: "db", ReadOnly: false, Sticky: false, AccessMode: "", AttachmentMode: "", MountOptions: null, PerAlloc: false } } })).toBeUndefined();
  expect(hostVolumeProblem({ HostVolumes: OFFERED }, { Volumes: {} })).toBeUndefined();
});
