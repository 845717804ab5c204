/**
 * Where a block or attribute sits in an HCL file, so that a problem found
 * after parsing (an unknown key, a wrong type, a missing field) can name its
 * line and column the way a syntax error does. HashiCorp's parser, as
 * @cdktf/hcl2json ships it, returns plain JSON with no positions, and no
 * maintained JavaScript HCL parser gives them; so this reads the file's
 * outline itself: which names open blocks (with their labels) and which set
 * attributes, at each depth. Values are skipped, not parsed (strings,
 * templates, heredocs, comments and brackets are stepped over), and the text
 * is one the real parser has already accepted.
 */
import { positionAt, type SourcePosition } from "./validation.ts";

/** One step of a path: a block or attribute name, the block's labels, or the n-th block of that name. */
export interface HclStep {
  name: string;
  labels?: readonly string[];
  index?: number;
}

interface Entry {
  name: string;
  labels: string[];
  offset: number;
  /** A block's body, or an object value's keys (`env = { X = "y" }`). */
  body: Entry[];
}

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_-]*/y;
const OPENING: Readonly<Record<string, string>> = { "(": ")", "[": "]", "{": "}" };

class Outline {
  private at = 0;

  constructor(private readonly text: string) {}

  /**
   * The entries up to the closing brace (or the end of the file at the top):
   * a body's attributes and blocks, or, in an object constructor
   * (`env = { A = "x", B: "y" }`), its keys.
   */
  entries(object = false): Entry[] {
    const entries: Entry[] = [];
    const valueStops = object ? [",", "\n", "}"] : ["\n", "}"];
    for (;;) {
      this.space(true);
      const ch = this.text[this.at];
      if (ch === undefined) return entries;
      if (ch === "}" || (object && ch === ",")) {
        this.at++;
        if (ch === "}") return entries;
        continue;
      }
      const offset = this.at;
      const name = this.identifier() ?? this.quoted();
      this.space(false);
      const next = this.text[this.at];
      if (name !== undefined && ((next === "=" && this.text[this.at + 1] !== "=") || (object && next === ":"))) {
        this.at++;
        entries.push({ name, labels: [], offset, body: this.value(valueStops) });
      } else if (object) {
        this.expression(valueStops);
      } else if (name === undefined) {
        // Not an entry (the parser accepted the file, so this is rare): step over it.
        this.at++;
      } else {
        const labels: string[] = [];
        for (let label = this.quoted() ?? this.identifier(); label !== undefined; label = this.quoted() ?? this.identifier()) {
          labels.push(label);
          this.space(false);
        }
        if (this.text[this.at] === "{") {
          this.at++;
          entries.push({ name, labels, offset, body: this.entries() });
        }
      }
    }
  }

  /** Skips a value up to one of `stops` (the end of its line, in a body); an object value's keys are kept. */
  private value(stops: readonly string[]): Entry[] {
    this.space(false);
    let keys: Entry[] = [];
    if (this.text[this.at] === "{") {
      this.at++;
      keys = this.entries(true);
    }
    this.expression(stops);
    return keys;
  }

  /** Steps over an expression until one of `stops` at depth 0 (the stop is not consumed). */
  private expression(stops: readonly string[]): void {
    const closers: string[] = [];
    for (;;) {
      const ch = this.text[this.at];
      if (ch === undefined) return;
      if (closers.length === 0 && stops.includes(ch)) return;
      if (ch === '"') {
        this.quoted();
        continue;
      }
      if (ch === "<" && this.text[this.at + 1] === "<" && this.heredoc()) continue;
      if (this.comment()) continue;
      if (ch in OPENING) closers.push(OPENING[ch]!);
      else if (ch === closers.at(-1)) closers.pop();
      this.at++;
    }
  }

  private identifier(): string | undefined {
    IDENTIFIER.lastIndex = this.at;
    const match = IDENTIFIER.exec(this.text);
    if (!match) return undefined;
    this.at += match[0].length;
    return match[0];
  }

  /** A quoted string (templates inside it stepped over), returned without its quotes. */
  private quoted(): string | undefined {
    if (this.text[this.at] !== '"') return undefined;
    const start = ++this.at;
    for (;;) {
      const ch = this.text[this.at];
      if (ch === undefined || ch === '"' || ch === "\n") break;
      if (ch === "\\") this.at += 2;
      else if ((ch === "$" || ch === "%") && this.text[this.at + 1] === "{") {
        this.at += 2;
        this.expression(["}"]);
        this.at++;
      } else this.at++;
    }
    const value = this.text.slice(start, this.at);
    if (this.text[this.at] === '"') this.at++;
    return value;
  }

  /** `<<EOF` or `<<-EOF` up to the line holding only the marker. */
  private heredoc(): boolean {
    const match = /<<-?([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n/y;
    match.lastIndex = this.at;
    const found = match.exec(this.text);
    if (!found) return false;
    const end = new RegExp(`^[ \\t]*${found[1]}[ \\t]*$`, "m");
    end.lastIndex = 0;
    const rest = this.text.slice(this.at + found[0].length);
    const close = end.exec(rest);
    this.at = close ? this.at + found[0].length + close.index + close[0].length : this.text.length;
    return true;
  }

  private comment(): boolean {
    const two = this.text.slice(this.at, this.at + 2);
    if (this.text[this.at] === "#" || two === "//") {
      const end = this.text.indexOf("\n", this.at);
      this.at = end === -1 ? this.text.length : end;
      return true;
    }
    if (two === "/*") {
      const end = this.text.indexOf("*/", this.at + 2);
      this.at = end === -1 ? this.text.length : end + 2;
      return true;
    }
    return false;
  }

  private space(newlines: boolean): void {
    for (;;) {
      const ch = this.text[this.at];
      if (ch === " " || ch === "\t" || ch === "\r" || (newlines && ch === "\n")) this.at++;
      else if (!this.comment()) return;
    }
  }
}

function matches(entry: Entry, step: HclStep): boolean {
  return entry.name === step.name && (step.labels ?? []).every((label, i) => entry.labels[i] === label);
}

/**
 * The position of the deepest entry of `path` found in `text` (a missing
 * field is placed at the block that lacks it), or undefined when not even the
 * first step is there.
 */
export function locateInHcl(text: string, path: readonly HclStep[]): SourcePosition | undefined {
  let entries = new Outline(text).entries();
  let found: Entry | undefined;
  for (const step of path) {
    const candidates = entries.filter((entry) => matches(entry, step));
    const entry = candidates[step.index ?? 0];
    if (!entry) break;
    found = entry;
    entries = entry.body;
  }
  return found && positionAt(text, found.offset);
}
