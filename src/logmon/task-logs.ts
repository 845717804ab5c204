/** A registered task's two streams, stdout and stderr, opened and closed together. */
import { listLogDir, LOG_TYPES } from "../log-layout/layout.ts";
import { LogStream, type Scratch } from "./log-stream.ts";
import type { LogmonTask } from "./protocol.ts";

export class TaskLogs {
  readonly streams: readonly LogStream[];

  private constructor(
    public task: LogmonTask,
    streams: LogStream[],
  ) {
    this.streams = streams;
  }

  /** Opens both FIFOs and live files; on failure closes what it opened and throws. */
  static open(task: LogmonTask, scratch: Scratch): TaskLogs {
    const opened: LogStream[] = [];
    try {
      // Both streams' files are in one dir: it is listed once, not once per stream.
      const listing = listLogDir(task.logDir);
      for (const type of LOG_TYPES) {
        const stream = new LogStream(task.logDir, task.taskName, type, task, scratch);
        stream.open(listing);
        opened.push(stream);
      }
    } catch (err) {
      for (const stream of opened) stream.close();
      throw err;
    }
    return new TaskLogs(task, opened);
  }

  /** Same FIFOs as `other` (whatever the limits). */
  sameFifos(other: LogmonTask): boolean {
    return this.task.logDir === other.logDir && this.task.taskName === other.taskName;
  }

  /** Takes new limits; true when they differ from the old ones. */
  updateLimits(task: LogmonTask): boolean {
    if (task.maxFiles === this.task.maxFiles && task.maxFileSizeMB === this.task.maxFileSizeMB) return false;
    this.task = task;
    for (const stream of this.streams) stream.files.setLimits(task);
    return true;
  }

  /** True when the task's FIFOs were deleted (its alloc dir destroyed without a deregister). */
  abandoned(): boolean {
    return this.streams.every((stream) => stream.fifoDeleted());
  }

  flush(): number {
    return this.streams.reduce((bytes, stream) => bytes + stream.flush(), 0);
  }

  close(): void {
    for (const stream of this.streams) stream.close();
  }
}
