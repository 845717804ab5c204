/**
 * The registered tasks, persisted in the logmon's state dir so that a logmon
 * restarted after a crash resumes every FIFO before the agent (which may be
 * down too) registers them again.
 */
import { readFileSync, renameSync } from "node:fs";
import * as v from "valibot";
import { writeFileAtomic } from "../runtime/fs.ts";
import { LogmonTaskSchema, type LogmonTask } from "./protocol.ts";

/** The file in the logmon's state dir; the supervisor reads it too, to tell whether tasks still need a logmon. */
export const REGISTRATIONS_FILE = "registrations.json";

const FILE_VERSION = 1;

const RegistrationsFile = v.object({
  version: v.literal(FILE_VERSION),
  tasks: v.array(LogmonTaskSchema),
});

export class Registrations {
  constructor(readonly path: string) {}

  /** The saved tasks; none when there is no file. An unreadable file is set aside and reported. */
  load(): { tasks: LogmonTask[]; problem?: string } {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { tasks: [] };
      throw err;
    }
    let parsed: v.SafeParseResult<typeof RegistrationsFile>;
    try {
      parsed = v.safeParse(RegistrationsFile, JSON.parse(text));
    } catch (err) {
      return { tasks: [], problem: this.setAside(`not JSON (${(err as Error).message})`) };
    }
    if (!parsed.success) return { tasks: [], problem: this.setAside(v.summarize(parsed.issues)) };
    return { tasks: parsed.output.tasks };
  }

  /** Whether saved tasks may be waiting, read without touching the file (the agent asks while a logmon may run). */
  mayHaveTasks(): boolean {
    try {
      const parsed = v.safeParse(RegistrationsFile, JSON.parse(readFileSync(this.path, "utf8")));
      return !parsed.success || parsed.output.tasks.length > 0;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== "ENOENT";
    }
  }

  save(tasks: readonly LogmonTask[]): void {
    writeFileAtomic(this.path, `${JSON.stringify({ version: FILE_VERSION, tasks })}\n`, 0o600);
  }

  private setAside(reason: string): string {
    const aside = `${this.path}.unreadable-${Date.now()}`;
    renameSync(this.path, aside);
    return `${this.path} unreadable (${reason}); moved to ${aside}`;
  }
}
