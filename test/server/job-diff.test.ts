import { describe, expect, test } from "bun:test";
import { jobFromApi } from "../../src/jobspec/api-job.ts";
import { diffJobs } from "../../src/server/job-diff.ts";
import type { Job } from "../../src/structs/job.ts";
import { testJob } from "./fixtures.ts";

const job = (overrides: Parameters<typeof testJob>[1] = {}, edit: (raw: Record<string, unknown>) => void = () => {}): Job => {
  const raw = testJob("web", overrides);
  edit(raw);
  return jobFromApi(raw, { source: "job", style: "json" });
};

describe("job diff", () => {
  test("a new job: everything added, fields of the job, group and task included", () => {
    const diff = diffJobs(undefined, job());
    expect(diff).toMatchObject({ Type: "Added", ID: "web" });
    expect(diff.Fields).toContainEqual({ Type: "Added", Name: "Priority", Old: "", New: "50", Annotations: null });
    expect(diff.Objects).toContainEqual({ Type: "Added", Name: "Datacenters", Fields: [{ Type: "Added", Name: "Datacenters", Old: "", New: "dc1", Annotations: null }], Objects: null });
    const group = diff.TaskGroups![0]!;
    expect(group).toMatchObject({ Type: "Added", Name: "web" });
    expect(group.Fields).toContainEqual(expect.objectContaining({ Name: "Count", New: "1" }));
    const task = group.Tasks![0]!;
    expect(task).toMatchObject({ Type: "Added", Name: "srv" });
    expect(task.Objects).toContainEqual(expect.objectContaining({ Type: "Added", Name: "Config", Fields: expect.arrayContaining([expect.objectContaining({ Name: "args[0]", New: "600" })]) }));
  });

  test("an edit lists only what changed at the top, and the whole of a changed object for context", () => {
    const before = job();
    const after = job({ count: 3, meta: { team: "core" } }, (raw) => {
      const task = (raw.TaskGroups as { Tasks: { Config: { args: string[] } }[] }[])[0]!.Tasks[0]!;
      task.Config.args = ["900"];
    });
    const diff = diffJobs(before, after);
    expect(diff.Type).toBe("Edited");
    expect(diff.Fields).toEqual([{ Type: "Added", Name: "Meta[team]", Old: "", New: "core", Annotations: null }]);
    const group = diff.TaskGroups![0]!;
    expect(group.Type).toBe("Edited");
    expect(group.Fields).toEqual([{ Type: "Edited", Name: "Count", Old: "1", New: "3", Annotations: null }]);
    const task = group.Tasks![0]!;
    expect(task.Fields).toBeNull();
    expect(task.Objects).toEqual([
      {
        Type: "Edited",
        Name: "Config",
        Fields: [
          { Type: "Edited", Name: "args[0]", Old: "600", New: "900", Annotations: null },
          { Type: "None", Name: "command", Old: "/bin/sleep", New: "/bin/sleep", Annotations: null },
        ],
        Objects: null,
      },
    ]);
  });

  test("the same job diffs to None; an added group is Added beside an unchanged one", () => {
    expect(diffJobs(job(), job()).Type).toBe("None");
    const diff = diffJobs(job(), job({ groups: ["web", "api"] }));
    expect(diff.TaskGroups!.map((group) => [group.Name, group.Type])).toEqual([
      ["api", "Added"],
      ["web", "None"],
    ]);
  });
});
