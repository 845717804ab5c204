/**
 * Where a log request starts, in Nomad's terms: an offset relative to the
 * start of the oldest rotated file (origin "start") or to the end of the live
 * one (origin "end"), walking across file boundaries (Nomad's findClosest).
 *
 *   files 3 (100 B) 4 (100 B) 5 (40 B, live)
 *   start+150 ─► file 4 at 50        end+60 ─► file 4 at 80
 *   start+999 ─► file 5 at 40 (its end)   end+999 ─► file 3 at 0 (the start)
 */
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { logFileIndexes, logFileName, type LogType } from "../../log-layout/layout.ts";

export type Origin = "start" | "end";

export interface LogPosition {
  index: number;
  offset: number;
}

/**
 * The rotated files of one stream, oldest first, with their sizes now. Only
 * regular files count: the task can write in its log dir, and a symlink
 * planted there must not make the API read what it points to.
 */
export function listLogFiles(logDir: string, task: string, type: LogType): { index: number; size: number }[] {
  const files: { index: number; size: number }[] = [];
  for (const index of logFileIndexes(logDir, task, type)) {
    try {
      const stat = lstatSync(join(logDir, logFileName(task, type, index)));
      if (stat.isFile()) files.push({ index, size: stat.size });
    } catch {
      // Rotated out meanwhile.
    }
  }
  return files;
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
