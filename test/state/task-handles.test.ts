import { join } from "node:path";
import { describe, expect, test } from "bun:test";
import { openClientState } from "../../src/state/client/db.ts";
import { deleteTaskHandle, listTaskHandles, loadTaskHandleJson, saveTaskHandle } from "../../src/state/client/task-handles.ts";
import { parseStoredHandle } from "../../src/drivers/handle.ts";
import { taskStore } from "../../src/state/client/allocs.ts";
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
    expect(JSON.parse(loadTaskHandleJson(second, "a1", "web") ?? "null")).toEqual({ executor: { pid: 11 } });
    expect(listTaskHandles(second).map((row) => row.taskName).sort()).toEqual(["db", "web"]);
    deleteTaskHandle(second, "a1", "web");
    expect(loadTaskHandleJson(second, "a1", "web")).toBeNull();
    second.raw.close();
  });
});

describe("task store", () => {
  test("a handle this binary cannot use comes back as null with the reason, never silently dropped", () => {
    const state = openClientState(join(tempDir(), "client"));
    saveTaskHandle(state, { allocId: "a1", taskName: "web", driver: "raw_exec", handle: { version: 99 } });
    saveTaskHandle(state, { allocId: "a1", taskName: "db", driver: "raw_exec", handle: {} });
    state.raw.exec("UPDATE task_handles SET handle = '{not json' WHERE task_name = 'db'");

    const web = parseStoredHandle(taskStore(state, "a1", "web", "raw_exec").load().handleJson);
    expect(web.handle).toBeNull();
    expect(web.problem).toContain("version");
    const db = parseStoredHandle(taskStore(state, "a1", "db", "raw_exec").load().handleJson);
    expect(db.handle).toBeNull();
    expect(db.problem).toStartWith("not JSON");
    expect(taskStore(state, "a1", "none", "raw_exec").load()).toEqual({ state: null, local: null, handleJson: null });
    state.raw.close();
  });
});
