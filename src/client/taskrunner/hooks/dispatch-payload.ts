/**
 * Writes a dispatched job's payload to the file its task asked for
 * (`dispatch_payload { file = "input.json" }`), under the task's local/
 * dir, before the task first starts (Nomad's dispatch hook). Jobs that are
 * not dispatched, and tasks without the block, write nothing.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { insideTaskDir } from "./artifact.ts";
import type { PrestartRequest, PrestartResponse, TaskHook } from "./hook.ts";

export function dispatchPayloadHook(): TaskHook {
  return {
    name: "dispatch_payload",
    async prestart(req: PrestartRequest): Promise<PrestartResponse> {
      const file = req.task.DispatchPayload?.File;
      const payload = req.alloc.Job.Payload;
      if (!file || payload === null) return { done: true };
      const target = await insideTaskDir(req.taskDir.root, `local/${file}`);
      await mkdir(dirname(target), { recursive: true });
      // Nomad's JSON carries the payload as base64 ([]byte).
      await writeFile(target, Buffer.from(payload, "base64"), { mode: 0o644 });
      return { done: true };
    },
  };
}
