/**
 * yamldecode's YAML: the subset job files feed it (block mappings and
 * sequences, plain and quoted scalars, `|` and `>` block scalars, flow
 * collections written as JSON, comments, one document). Anchors, tags and
 * multiple documents are refused by name rather than misread.
 */
import { HclEvalError, type ObjectValue, type Value } from "../values.ts";

interface Line {
  indent: number;
  text: string;
  number: number;
}

function scalar(raw: string, line: number): Value {
  const text = raw.trim();
  if (text === "" || text === "~" || text === "null" || text === "Null" || text === "NULL") return null;
  if (/^(?:true|True|TRUE)$/.test(text)) return true;
  if (/^(?:false|False|FALSE)$/.test(text)) return false;
  if (/^[-+]?(?:0|[1-9][0-9]*)$/.test(text)) return Number(text);
  if (/^[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (text.startsWith("'")) return text.slice(1, -1).replace(/''/g, "'");
  if (text.startsWith("[") || text.startsWith("{")) {
    try {
      return JSON.parse(text) as Value;
    } catch {
      throw new HclEvalError(`YAML line ${line}: flow collections are read only when written as JSON`);
    }
  }
  if (/^[&*!]/.test(text)) throw new HclEvalError(`YAML line ${line}: anchors, aliases and tags are not supported`);
  return text;
}

/** The value text after `key:` or `- ` with its trailing comment removed (outside quotes). */
function stripComment(text: string): string {
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === "#" && (i === 0 || text[i - 1] === " ")) return text.slice(0, i).trimEnd();
  }
  return text;
}

class YamlReader {
  private at = 0;

  constructor(
    private readonly lines: Line[],
    private readonly all: string[],
  ) {}

  value(indent: number): Value {
    const line = this.lines[this.at];
    if (!line || line.indent < indent) return null;
    if (line.text === "-" || line.text.startsWith("- ")) return this.sequence(line.indent);
    if (/^(?:"[^"]*"|'[^']*'|[^\s#'"][^:#]*?)\s*:(?:\s|$)/.test(line.text)) return this.mapping(line.indent);
    this.at++;
    return scalar(line.text, line.number);
  }

  private sequence(indent: number): Value[] {
    const out: Value[] = [];
    for (let line = this.lines[this.at]; line && line.indent === indent && (line.text === "-" || line.text.startsWith("- ")); line = this.lines[this.at]) {
      const rest = line.text.slice(1).trimStart();
      if (rest === "") {
        this.at++;
        out.push(this.value(indent + 1));
      } else {
        // "- key: v" opens a mapping whose keys sit at the column after "- ".
        const column = indent + (line.text.length - rest.length);
        this.lines[this.at] = { indent: column, text: rest, number: line.number };
        out.push(this.value(column));
      }
    }
    return out;
  }

  private mapping(indent: number): ObjectValue {
    const out: ObjectValue = {};
    for (let line = this.lines[this.at]; line && line.indent === indent; line = this.lines[this.at]) {
      const match = /^("[^"]*"|'[^']*'|[^\s#'"][^:#]*?)\s*:(?:\s+(.*))?$/.exec(line.text);
      if (!match) throw new HclEvalError(`YAML line ${line.number}: expected "key: value"`);
      const key = String(scalar(match[1]!, line.number));
      const rest = stripComment(match[2] ?? "");
      this.at++;
      if (rest === "|" || rest === ">" || rest === "|-" || rest === ">-") out[key] = this.block(rest, indent, line.number);
      else if (rest === "") out[key] = this.value(indent + 1);
      else out[key] = scalar(rest, line.number);
    }
    return out;
  }

  /** A `|` (kept lines) or `>` (folded) scalar: the raw lines indented deeper than its key. */
  private block(style: string, indent: number, from: number): string {
    const raw: string[] = [];
    let end = from;
    while (end < this.all.length) {
      const text = this.all[end]!;
      const width = /^ */.exec(text)![0].length;
      if (text.trim() !== "" && width <= indent) break;
      raw.push(text);
      end++;
    }
    while (this.lines[this.at] && this.lines[this.at]!.number <= end) this.at++;
    while (raw.length > 0 && raw.at(-1)!.trim() === "") raw.pop();
    const cut = Math.min(...raw.filter((text) => text.trim() !== "").map((text) => /^ */.exec(text)![0].length));
    const body = raw.map((text) => text.slice(cut));
    const joined = style.startsWith("|") ? body.join("\n") : body.join(" ");
    return style.endsWith("-") ? joined : `${joined}\n`;
  }

  done(): Line | undefined {
    return this.lines[this.at];
  }
}

export function yamlDecode(text: string): Value {
  const all = text.split(/\r?\n/);
  const lines: Line[] = [];
  all.forEach((raw, i) => {
    const content = stripComment(raw);
    if (content.trim() === "" || content.trim() === "---") return;
    if (content.trim() === "...") return;
    if (/^\t/.test(raw)) throw new HclEvalError(`YAML line ${i + 1}: tabs are not allowed for indentation`);
    lines.push({ indent: /^ */.exec(content)![0].length, text: content.trim(), number: i + 1 });
  });
  if (text.split(/^---/m).length > 2) throw new HclEvalError("only one YAML document is supported");
  const reader = new YamlReader(lines, all);
  const value = reader.value(0);
  const rest = reader.done();
  if (rest) throw new HclEvalError(`YAML line ${rest.number}: unexpected indentation`);
  return value;
}
