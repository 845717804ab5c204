/**
 * Job files of Nomad 1.6's own repository that need HCL2 evaluation
 * (fixtures/nomad-1.6-hcl2/README.md), parsed with the values Nomad's e2e tests
 * give their variables: each field that came from an expression holds what
 * Nomad's jobspec2 makes of it, and client references stay as written.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseJobHcl } from "../../src/jobspec/index.ts";

const DIR = join(import.meta.dir, "fixtures/nomad-1.6-hcl2");
const parse = (name: string, args: string[] = []) =>
  parseJobHcl(name, readFileSync(join(DIR, name), "utf8"), { validate: false, filesDir: DIR, variables: { args } });

describe("Nomad 1.6's job files", () => {
  test("xyz.hcl: typed variables from -var, in a template next to a client reference", async () => {
    const job = await parse("xyz.hcl", ["X=hello", "Y=3.5", "Z=true"]);
    expect(job.Constraints).toEqual([{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }]);
    expect(job.TaskGroups[0]!.Tasks[0]!.Config).toEqual({ command: "echo", args: ["X hello, Y 3.5, Z true"] });
    await expect(parse("xyz.hcl", ["X=hello", "Y=many", "Z=true"])).rejects.toThrow('xyz.hcl:8,1: variable["Y"]: the value from -var Y');
  });

  test("kadalu-nodeplugin.nomad: defaults, uuidv5 and heredoc templates", async () => {
    const job = await parse("kadalu-nodeplugin.nomad");
    expect(job.Datacenters).toEqual(["dc1"]);
    const task = job.TaskGroups[0]!.Tasks[0]!;
    expect(task.Config.image).toBe("docker.io/kadalu/kadalu-csi:0.8.15");
    const [info, uid, env] = task.Templates;
    expect(info!.DestPath).toBe("${NOMAD_TASK_DIR}/sample-pool.info");
    expect(info!.EmbeddedTmpl).toContain('"volume_id": "cf8b0a96-d501-5ad5-84f1-c731c359bfe7",\n');
    expect(uid!.EmbeddedTmpl).toBe("808d0902-f454-5ea3-b749-cfd111cc35ed");
    expect(env!.EmbeddedTmpl).toBe(
      'NODE_ID        = "${node.unique.name}"\nCSI_ENDPOINT   = "unix://csi/csi.sock"\nKADALU_VERSION = "0.8.15"\nCSI_ROLE       = "nodeplugin"\nVERBOSE        = "yes"\n',
    );
    expect(task.Config.mount).toContainEqual({ type: "bind", source: "./${NOMAD_TASK_DIR}/sample-pool.info", target: "/var/lib/gluster/sample-pool.info", readonly: true });
  });

  test("checks_task_restart_helper.nomad: variables without defaults, each named when unset", async () => {
    const job = await parse("checks_task_restart_helper.nomad", ["nodeID=abc", "cmd=touch", "delay=3"]);
    const group = job.TaskGroups[0]!;
    expect(group.Constraints).toContainEqual({ LTarget: "${node.unique_id}", RTarget: "abc", Operand: "=" });
    expect(group.Tasks[0]!.Config.args).toEqual(["-c", "sleep 3 && touch /tmp/nsd-checks-task-restart-test.txt"]);
    await expect(parse("checks_task_restart_helper.nomad", ["nodeID=abc"])).rejects.toThrow(/variable\["cmd"\]: unset variable "cmd".*variable\["delay"\]: unset variable "delay"/);
  });

  test("thirteen_job_priority.nomad: an unquoted variable reference", async () => {
    expect((await parse("thirteen_job_priority.nomad")).TaskGroups[0]!.Tasks[0]!.Config.image).toBe("busybox:1");
    expect((await parse("thirteen_job_priority.nomad", ["image=busybox:2"])).TaskGroups[0]!.Tasks[0]!.Config.image).toBe("busybox:2");
  });
});
