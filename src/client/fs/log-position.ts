/**
 * Where a log request starts, in Nomad's terms: an offset relative to the
 * start of the oldest rotated file (origin "start") or to the end of the live
 * one (origin "end"), walking across file boundaries (Nomad's findClosest).
 *
 *   files 3 (100 B) 4 (100 B) 5 (40 B, live)
 *   start+150 ─► file 4 at 50        end+60 ─► file 4 at 80
 *   start+999 ─► file 5 at 40 (its end)   end+999 ─► file 3 at 0 (the start)
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { logFileIndexes, logFileName, type LogType } from "../logmon/layout.ts";

export type Origin = "start" | "end";

export interface LogPosition {
  index: number;
  offset: number;
}

/** The rotated files of one stream, oldest first, with their sizes now (a file gone meanwhile counts as empty). */
export function listLogFiles(logDir: string, task: string, type: LogType): { index: number; size: number }[] {
  return logFileIndexes(logDir, task, type).map((index) => {
    try {
      return { index, size: statSync(join(logDir, logFileName(task, type, index))).size };
    } catch {
      return { index, size: 0 };
    }
  });
}

/** The position `offset` bytes from `origin`; null when the stream has no files. */
export function findLogPosition(logDir: string, task: string, type: LogType, origin: Origin, offset: number): LogPosition | null {
  const files = listLogFiles(logDir, task, type);
  if (files.length === 0) return null;
  let remaining = offset;
  if (origin === "start") {
    for (let i = 0; i < files.length; i++) {
      const file = files[i]!;
      if (remaining <= file.size || i === files.length - 1) return { index: file.index, offset: Math.min(remaining, file.size) };
      remaining -= file.size;
    }
  }
  for (let i = files.length - 1; i >= 0; i--) {
    const file = files[i]!;
    if (remaining <= file.size) return { index: file.index, offset: file.size - remaining };
    if (i === 0) return { index: file.index, offset: 0 };
    remaining -= file.size;
  }
  return null;
}
