/**
 * The registered tasks, persisted in the logmon's state dir so that a logmon
 * restarted after a crash resumes every FIFO before the agent (which may be
 * down too) registers them again.
 *
 * Two files: a snapshot of every task (registrations.json, replaced whole) and
 * a journal of the changes since (registrations.json.journal, one JSON line
 * per change, appended and synced). A batch of registrations costs its own
 * lines, not a rewrite of every task's: rewriting the whole list at each batch
 * made the start of n tasks O(n²) in the logmon (1000 tasks: ~0.5 CPU s and
 * ~2 s of fsync waits on its one thread, issue 35). Once the journal holds
 * more lines than there are tasks (JOURNAL_MIN_LINES at least), the logmon
 * writes a new snapshot and the journal starts empty.
 *
 *   load()   snapshot, then each journal line in order: {"add": task} sets the task by id,
 *            {"remove": id} drops it (replaying twice gives the same tasks); a last line
 *            without its newline is an append a crash cut short, whose caller was never
 *            answered, and is passed over
 */
import { closeSync, fdatasyncSync, openSync, readFileSync, renameSync, statSync, truncateSync, writeSync } from "node:fs";
import * as v from "valibot";
import { writeFileAtomic } from "../runtime/fs.ts";
import { LogmonTaskSchema, type LogmonTask } from "./protocol.ts";

/** The file in the logmon's state dir; the supervisor reads it too, to tell whether tasks still need a logmon. */
export const REGISTRATIONS_FILE = "registrations.json";

const FILE_VERSION = 1;

/** Beside the snapshot, by its name. */
export const JOURNAL_SUFFIX = ".journal";

/** The journal is folded into a new snapshot past this many lines, or past as many as there are tasks. */
export const JOURNAL_MIN_LINES = 64;

const RegistrationsFile = v.object({
  version: v.literal(FILE_VERSION),
  tasks: v.array(LogmonTaskSchema),
});

const JournalLine = v.union([v.strictObject({ add: LogmonTaskSchema }), v.strictObject({ remove: v.string() })]);

/** What changed, by task id: the task as it now stands, or null when it was removed. */
export type RegistrationChanges = ReadonlyMap<string, LogmonTask | null>;

export class Registrations {
  /** Lines in the journal since the last snapshot, as this process knows it. */
  journalLines = 0;

  constructor(readonly path: string) {}

  get journalPath(): string {
    return `${this.path}${JOURNAL_SUFFIX}`;
  }

  /** The saved tasks; none when there is no file. An unreadable file is set aside and reported. */
  load(): { tasks: LogmonTask[]; problem?: string } {
    const snapshot = this.loadSnapshot();
    const tasks = new Map(snapshot.tasks.map((task) => [task.id, task]));
    const journal = this.replayJournal(tasks);
    const problem = [snapshot.problem, journal.problem].filter((text) => text !== undefined).join("; ") || undefined;
    return { tasks: [...tasks.values()], ...(problem ? { problem } : {}) };
  }

  /** Whether saved tasks may be waiting, read without touching the files (the agent asks while a logmon may run). */
  mayHaveTasks(): boolean {
    try {
      if (statSync(this.journalPath).size > 0) return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") return true;
    }
    try {
      const parsed = v.safeParse(RegistrationsFile, JSON.parse(readFileSync(this.path, "utf8")));
      return !parsed.success || parsed.output.tasks.length > 0;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code !== "ENOENT";
    }
  }

  /** Whether the next write should be a snapshot of `taskCount` tasks rather than `changes` more journal lines. */
  wantsSnapshot(changes: number, taskCount: number): boolean {
    return this.journalLines + changes > Math.max(JOURNAL_MIN_LINES, taskCount);
  }

  /** Every task as a new snapshot (atomic, synced), then an empty journal. */
  save(tasks: readonly LogmonTask[]): void {
    writeFileAtomic(this.path, `${JSON.stringify({ version: FILE_VERSION, tasks })}\n`, 0o600);
    // A crash before this truncation leaves lines the snapshot already holds: replaying them changes nothing.
    try {
      truncateSync(this.journalPath, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    this.journalLines = 0;
  }

  /** `changes` appended to the journal and synced before this returns. */
  append(changes: RegistrationChanges): void {
    const lines = [...changes].map(([id, task]) => `${JSON.stringify(task ? { add: task } : { remove: id })}\n`).join("");
    const fd = openSync(this.journalPath, "a", 0o600);
    try {
      writeSync(fd, lines);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.journalLines += changes.size;
  }

  private loadSnapshot(): { tasks: LogmonTask[]; problem?: string } {
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
      return { tasks: [], problem: this.setAside(this.path, `not JSON (${(err as Error).message})`) };
    }
    if (!parsed.success) return { tasks: [], problem: this.setAside(this.path, v.summarize(parsed.issues)) };
    return { tasks: parsed.output.tasks };
  }

  /** Applies the journal's lines to `tasks`; a journal with a bad line is set aside, its good lines before it applied. */
  private replayJournal(tasks: Map<string, LogmonTask>): { problem?: string } {
    let text: string;
    try {
      text = readFileSync(this.journalPath, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw err;
    }
    const lines = text.split("\n");
    // The piece after the last newline: empty, or an append cut short (see the header).
    lines.pop();
    this.journalLines = lines.length;
    for (const [i, line] of lines.entries()) {
      let parsed: v.SafeParseResult<typeof JournalLine>;
      try {
        parsed = v.safeParse(JournalLine, JSON.parse(line));
      } catch (err) {
        return { problem: this.setAside(this.journalPath, `line ${i + 1} not JSON (${(err as Error).message})`) };
      }
      if (!parsed.success) return { problem: this.setAside(this.journalPath, `line ${i + 1}: ${v.summarize(parsed.issues)}`) };
      if ("add" in parsed.output) tasks.set(parsed.output.add.id, parsed.output.add);
      else tasks.delete(parsed.output.remove);
    }
    return {};
  }

  private setAside(path: string, reason: string): string {
    const aside = `${path}.unreadable-${Date.now()}`;
    renameSync(path, aside);
    if (path === this.journalPath) this.journalLines = 0;
    return `${path} unreadable (${reason}); moved to ${aside}`;
  }
}
