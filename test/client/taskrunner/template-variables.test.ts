/**
 * The template hook's Nomad Variables functions on their own: nomadVar and
 * friends render what the task may read, and a change to a variable is
 * rendered again while the task runs.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { templateHook, type TemplateVariables } from "../../../src/client/taskrunner/hooks/template.ts";
import { taskDirHook } from "../../../src/client/taskrunner/hooks/task-dir.ts";
import type { VariableItems } from "../../../src/structs/variable.ts";
import { waitFor } from "../../helpers/index.ts";
import { allocRunner, job, placeJob, task } from "../fixtures.ts";

const meta = (path: string) => ({ Namespace: "default", Path: path, CreateIndex: 1, CreateTime: 1, ModifyIndex: 1, ModifyTime: 1 });

/** Variables in memory; reading `secret/...` is refused, as a task's identity would be. */
function memoryVariables(store: Map<string, VariableItems>): TemplateVariables & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    read: async (alloc, name, path) => {
      asked.push(`${alloc.JobID}/${name}:${path}`);
      if (path.startsWith("secret/")) throw new Error("Permission denied");
      return store.get(path);
    },
    list: async (_alloc, _name, prefix) => [...store.keys()].filter((path) => path.startsWith(prefix)).sort().map(meta),
  };
}

async function runTemplate(data: string, variables: TemplateVariables | undefined) {
  const block = `template {\n data = <<EOT\n${data}\nEOT\n destination = "local/out.txt"\n change_mode = "noop"\n }`;
  const [alloc] = await placeJob(job([task("t", "run", block)]));
  const fixture = allocRunner(alloc!, { taskHooks: () => [taskDirHook({ secretsTmpfs: false }), templateHook({ getService: async () => [], ...(variables ? { variables } : {}) })] });
  void fixture.runner.run();
  const out = join(fixture.runner.allocDir.taskDir("t").local, "out.txt");
  return { ...fixture, out, state: () => fixture.runner.taskStates().t! };
}

describe("templates read Nomad Variables", () => {
  test("nomadVar, nomadVarExists and nomadVarList render; a changed variable is rendered again while the task runs", async () => {
    const store = new Map<string, VariableItems>([["nomad/jobs/j", { user: "admin" }], ["nomad/jobs/j/g", { port: "80" }]]);
    const variables = memoryVariables(store);
    const source = '{{ with nomadVar "nomad/jobs/j" }}user={{ .user }}{{ end }} exists={{ nomadVarExists "nomad/jobs/j/g" }} missing={{ nomadVarExists "nomad/jobs/x" }}{{ range nomadVarList "nomad/jobs" }} {{ .Path }}{{ end }}';
    const { out, runner, driver } = await runTemplate(source, variables);
    await waitFor("the first render", () => existsSync(out) && readFileSync(out, "utf8").startsWith("user="));
    expect(readFileSync(out, "utf8").trim()).toBe("user=admin exists=true missing=false nomad/jobs/j nomad/jobs/j/g");
    expect(variables.asked).toContain("j/t:nomad/jobs/j");
    await waitFor("the task running", () => driver.tasks.size === 1);

    store.set("nomad/jobs/j", { user: "root" });
    await waitFor("the variable's change rendered", () => readFileSync(out, "utf8").startsWith("user=root"));
    await runner.destroy();
  });

  test("a variable the task may not read fails the render naming it; without the server the functions say what they need", async () => {
    const refused = await runTemplate('{{ with nomadVar "secret/db" }}{{ .password }}{{ end }}', memoryVariables(new Map()));
    await waitFor("the task failed", () => refused.state().State === "dead");
    expect(refused.state().Events.map((event) => event.SetupError ?? "").join("\n")).toContain('nomadVar "secret/db": Permission denied');

    const serverless = await runTemplate('{{ nomadVar "nomad/jobs/j" }}', undefined);
    await waitFor("the task failed", () => serverless.state().State === "dead");
    expect(serverless.state().Events.map((event) => event.SetupError ?? "").join("\n")).toContain("needs drover's embedded server");
  });
});
