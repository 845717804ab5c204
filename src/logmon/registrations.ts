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
 * Each snapshot has a generation, one more than the last; a journal's first
 * line names the generation it follows ({"generation": g}). A crash between a
 * snapshot's rename and the journal's truncation leaves a journal older than
 * the snapshot: replaying it would bring back a task the snapshot removed, so
 * it is passed over.
 *
 *   load()   snapshot, then each journal line in order when the journal follows that
 *            snapshot: {"add": task} sets the task by id, {"remove": id} drops it; a last
 *            line without its newline is an append a crash cut short, whose caller was
 *            never answered, and is passed over. A journal passed over or cut short is
 *            reported (`repaired`), and the next write is a snapshot, never a line after it.
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

const Generation = v.pipe(v.number(), v.integer(), v.minValue(0));

const RegistrationsFile = v.object({
  version: v.literal(FILE_VERSION),
  // Absent in a snapshot written before there was a journal: the first generation.
  generation: v.optional(Generation, 0),
  tasks: v.array(LogmonTaskSchema),
});

const JournalHeader = v.strictObject({ generation: Generation });
const JournalLine = v.union([v.strictObject({ add: LogmonTaskSchema }), v.strictObject({ remove: v.string() })]);

/** What changed, by task id: the task as it now stands, or null when it was removed. */
export type RegistrationChanges = ReadonlyMap<string, LogmonTask | null>;

export class Registrations {
  /** Lines in the journal since the last snapshot, as this process knows it. */
  journalLines = 0;
  /** The generation of the snapshot on disk, which the journal's first line names. */
  private generation = 0;
  /** Whether the journal on disk holds its first line (the generation) and nothing cut short after its last line. */
  private journalStarted = false;
  /** The journal on disk may not be appended to (older than the snapshot, or cut short): the next write is a snapshot. */
  private journalStale = false;

  constructor(readonly path: string) {}

  get journalPath(): string {
    return `${this.path}${JOURNAL_SUFFIX}`;
  }

  /** The saved tasks; none when there is no file. An unreadable file is set aside and reported. */
  load(): { tasks: LogmonTask[]; problem?: string; repaired?: string } {
    const snapshot = this.loadSnapshot();
    this.generation = snapshot.generation;
    const tasks = new Map(snapshot.tasks.map((task) => [task.id, task]));
    // A journal beside no readable snapshot is all there is: it is replayed whatever it follows.
    const journal = this.replayJournal(tasks, snapshot.problem === undefined && snapshot.found ? snapshot.generation : undefined);
    const problem = [snapshot.problem, journal.problem].filter((text) => text !== undefined).join("; ") || undefined;
    return { tasks: [...tasks.values()], ...(problem ? { problem } : {}), ...(journal.repaired ? { repaired: journal.repaired } : {}) };
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
    return this.journalStale || this.journalLines + changes > Math.max(JOURNAL_MIN_LINES, taskCount);
  }

  /** Every task as a new snapshot (atomic, synced), then an empty journal. */
  save(tasks: readonly LogmonTask[]): void {
    const generation = this.generation + 1;
    writeFileAtomic(this.path, `${JSON.stringify({ version: FILE_VERSION, generation, tasks })}\n`, 0o600);
    this.generation = generation;
    // A crash before this truncation leaves a journal naming the generation before: load() passes it over,
    // as it would lines appended after a truncation that failed, so only another snapshot may follow one.
    this.journalStale = true;
    try {
      truncateSync(this.journalPath, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    this.journalLines = 0;
    this.journalStarted = false;
    this.journalStale = false;
  }

  /** `changes` appended to the journal and synced before this returns. */
  append(changes: RegistrationChanges): void {
    if (this.journalStale) throw new Error(`${this.journalPath} may not be appended to before a snapshot is written`);
    const header = this.journalStarted ? "" : `${JSON.stringify({ generation: this.generation })}\n`;
    const lines = header + [...changes].map(([id, task]) => `${JSON.stringify(task ? { add: task } : { remove: id })}\n`).join("");
    // A write that fails part way may leave a piece of a line: only a snapshot may follow it.
    this.journalStale = true;
    const bytes = Buffer.from(lines);
    const fd = openSync(this.journalPath, "a", 0o600);
    try {
      // A disk that fills part way takes only some of the bytes, without an error: the write of the rest throws ENOSPC.
      for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written, bytes.length - written);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.journalStale = false;
    this.journalStarted = true;
    this.journalLines += changes.size;
  }

  private loadSnapshot(): { tasks: LogmonTask[]; generation: number; found: boolean; problem?: string } {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { tasks: [], generation: 0, found: false };
      throw err;
    }
    let parsed: v.SafeParseResult<typeof RegistrationsFile>;
    try {
      parsed = v.safeParse(RegistrationsFile, JSON.parse(text));
    } catch (err) {
      return { tasks: [], generation: 0, found: true, problem: this.setAside(this.path, `not JSON (${(err as Error).message})`) };
    }
    if (!parsed.success) return { tasks: [], generation: 0, found: true, problem: this.setAside(this.path, v.summarize(parsed.issues)) };
    return { tasks: parsed.output.tasks, generation: parsed.output.generation, found: true };
  }

  /**
   * Applies the journal's lines to `tasks` when it follows snapshot `generation` (any journal when
   * undefined); a journal with a bad line is set aside, its good lines before it applied.
   */
  private replayJournal(tasks: Map<string, LogmonTask>, generation: number | undefined): { problem?: string; repaired?: string } {
    this.journalLines = 0;
    this.journalStarted = false;
    this.journalStale = false;
    let text: string;
    try {
      text = readFileSync(this.journalPath, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw err;
    }
    const lines = text.split("\n");
    // The piece after the last newline: empty, or an append cut short (see the header).
    const cutShort = lines.pop() !== "";
    const repaired: string[] = [];
    if (cutShort) repaired.push(`${this.journalPath}: its last line, cut short, passed over`);
    if (lines.length > 0) {
      const header = v.safeParse(JournalHeader, parseOrUndefined(lines[0]!));
      if (!header.success) return { problem: this.setAside(this.journalPath, `line 1: not {"generation": n}`) };
      if (generation !== undefined && header.output.generation !== generation) {
        this.journalStale = true;
        return { repaired: `${this.journalPath} follows snapshot ${header.output.generation}, not ${generation}: passed over` };
      }
      this.journalStarted = true;
    }
    for (const [i, line] of lines.entries()) {
      if (i === 0) continue;
      let parsed: v.SafeParseResult<typeof JournalLine>;
      try {
        parsed = v.safeParse(JournalLine, JSON.parse(line));
      } catch (err) {
        return { problem: this.setAside(this.journalPath, `line ${i + 1} not JSON (${(err as Error).message})`) };
      }
      if (!parsed.success) return { problem: this.setAside(this.journalPath, `line ${i + 1}: ${v.summarize(parsed.issues)}`) };
      if ("add" in parsed.output) tasks.set(parsed.output.add.id, parsed.output.add);
      else tasks.delete(parsed.output.remove);
      this.journalLines++;
    }
    this.journalStale = cutShort;
    return repaired.length > 0 ? { repaired: repaired.join("; ") } : {};
  }

  private setAside(path: string, reason: string): string {
    const aside = `${path}.unreadable-${Date.now()}`;
    renameSync(path, aside);
    if (path === this.journalPath) {
      this.journalLines = 0;
      this.journalStarted = false;
      this.journalStale = false;
    }
    return `${path} unreadable (${reason}); moved to ${aside}`;
  }
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
