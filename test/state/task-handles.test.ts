import { join } from "node:path";
import { describe, expect, test } from "bun:test";
import { openClientState } from "../../src/state/client/db.ts";
import { deleteTaskHandle, listTaskHandles, loadTaskHandle, saveTaskHandle } from "../../src/state/client/task-handles.ts";
import { tempDir } from "../helpers/index.ts";

describe("task handles table", () => {
  test("saved handles survive a reopen, one row per (alloc, task), replaced on save, gone on delete", () => {
    const dataDir = tempDir();
    const first = openClientState(join(dataDir, "client"));
    saveTaskHandle(first, { allocId: "a1", taskName: "web", driver: "raw_exec", handle: { executor: { pid: 10 } } });
    saveTaskHandle(first, { allocId: "a1", taskName: "web", driver: "raw_exec", handle: { executor: { pid: 11 } } });
    saveTaskHandle(first, { allocId: "a1", taskName: "db", driver: "raw_exec", handle: { executor: { pid: 12 } } });
    first.raw.close();

    const second = openClientState(join(dataDir, "client"));
    expect(loadTaskHandle(second, "a1", "web")).toEqual({ allocId: "a1", taskName: "web", driver: "raw_exec", handle: { executor: { pid: 11 } } });
    expect(listTaskHandles(second).map((row) => row.taskName).sort()).toEqual(["db", "web"]);
    deleteTaskHandle(second, "a1", "web");
    expect(loadTaskHandle(second, "a1", "web")).toBeNull();
    second.raw.close();
  });
});
