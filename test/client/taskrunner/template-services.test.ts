/**
 * The template hook's nomadService on the embedded server's catalog: a task
 * sees the instances of its own namespace, as Nomad's template runner (whose
 * client is set to the task's namespace) does.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { templateHook } from "../../../src/client/taskrunner/hooks/template.ts";
import { taskDirHook } from "../../../src/client/taskrunner/hooks/task-dir.ts";
import { clientEndpoint } from "../../../src/server/client-endpoint.ts";
import { openTestServer } from "../../server/fixtures.ts";
import { waitFor } from "../../helpers/index.ts";
import { allocRunner, job, placeJob, task } from "../fixtures.ts";

const instance = (namespace: string, address: string) => ({
  ID: `_nomad-task-${namespace}-db`,
  ServiceName: "db",
  Namespace: namespace,
  NodeID: "n",
  Datacenter: "dc1",
  JobID: "db",
  AllocID: "a",
  Tags: [],
  Address: address,
  Port: 5432,
});

describe("nomadService in a template", () => {
  test("renders the instances of the task's own namespace", async () => {
    const { server } = openTestServer();
    server.services.upsert([instance("default", "10.0.0.1"), instance("prod", "10.0.0.2")]);
    const endpoint = clientEndpoint(server);
    const block = 'template {\n data = "{{ range nomadService \\"db\\" }}{{ .Address }} {{ end }}"\n destination = "local/out.txt"\n change_mode = "noop"\n }';
    const [placed] = await placeJob(job([task("t", "run", block)]));
    const alloc = { ...placed!, Namespace: "prod", Job: { ...placed!.Job, Namespace: "prod" } };
    const fixture = allocRunner(alloc, {
      taskHooks: () => [taskDirHook({ secretsTmpfs: false }), templateHook({ getService: (name, namespace) => endpoint.getService(name, namespace) })],
    });
    void fixture.runner.run();
    const out = join(fixture.runner.allocDir.taskDir("t").local, "out.txt");
    await waitFor("the render", () => existsSync(out));
    expect(readFileSync(out, "utf8").trim()).toBe("10.0.0.2");
    await fixture.runner.destroy();
  });
});
