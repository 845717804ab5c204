/**
 * Go's text/template language, the part Nomad's templates use: text and
 * actions with custom delimiters and `{{-`/`-}}` trimming, comments,
 * pipelines (`a | f "x"`), fields (`.A.B`, `$x.A`), variables (`$x := ...`,
 * `$x = ...`), literals, `if`/`else if`/`else`, `range` (with `$i, $e :=`
 * and `else`), `with`, and Go's builtins (and, or, not, eq, ne, lt, le,
 * gt, ge, len, index, print, printf, println). Functions beyond those come
 * from the caller (the template hook, src/client/taskrunner/hooks/template.ts; the CLI adds `json`).
 *
 * Written here because no npm package implements Go templates with
 * function calls and pipelines (the one that parses Go's syntax,
 * @ctrl/golang-template, has no functions, pipes or variables, and every
 * Nomad template is function calls: `env "X"`, `nomadService "web"`).
 *
 *   source ──> lex (text | action tokens) ──> parse (tree of nodes) ──> execute(data, functions)
 */

export class TemplateError extends Error {
  override name = "TemplateError";
}

export type TemplateFunction = (...args: unknown[]) => unknown;

type Token =
  | { kind: "ident" | "field" | "var" | "string" | "number" | "op"; text: string }
  | { kind: "bool"; value: boolean }
  | { kind: "nil" };

type Operand =
  | { kind: "literal"; value: unknown }
  | { kind: "field"; base: "dot" | { variable: string } | { pipe: Pipeline }; path: string[] }
  | { kind: "call"; name: string };

interface Command {
  operands: Operand[];
}

interface Pipeline {
  declare: string[];
  assign: boolean;
  commands: Command[];
}

type Node =
  | { kind: "text"; text: string }
  | { kind: "action"; pipe: Pipeline }
  | { kind: "if" | "with"; pipe: Pipeline; body: Node[]; otherwise: Node[] }
  | { kind: "range"; pipe: Pipeline; body: Node[]; otherwise: Node[] };

interface Piece {
  text?: string;
  action?: string;
}

/** Splits the source into text and action bodies, applying trim markers and dropping comments. */
function lex(source: string, left: string, right: string): Piece[] {
  const pieces: Piece[] = [];
  let at = 0;
  while (at < source.length) {
    const open = source.indexOf(left, at);
    if (open < 0) {
      pieces.push({ text: source.slice(at) });
      break;
    }
    let text = source.slice(at, open);
    let start = open + left.length;
    if (source.startsWith("- ", start) || source.startsWith("-\n", start) || source.startsWith("-\t", start)) {
      text = text.replace(/\s+$/, "");
      start += 1;
    }
    if (text) pieces.push({ text });
    const close = source.indexOf(right, start);
    if (close < 0) throw new TemplateError(`unclosed action at offset ${open}`);
    let body = source.slice(start, close);
    at = close + right.length;
    if (/\s-$/.test(body)) {
      body = body.slice(0, -1);
      const rest = source.slice(at);
      at += rest.length - rest.replace(/^\s+/, "").length;
    }
    const trimmed = body.trim();
    if (trimmed.startsWith("/*")) {
      if (!trimmed.endsWith("*/")) throw new TemplateError("unclosed comment");
      continue;
    }
    pieces.push({ action: trimmed });
  }
  return pieces;
}

function tokenize(action: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s+|("(?:[^"\\]|\\.)*")|(`[^`]*`)|('(?:[^'\\]|\\.)')|(:=|=|\||\(|\)|,)|(\$[A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)|(\.[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*|\.)|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|0x[0-9a-fA-F]+)|([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)/y;
  let at = 0;
  while (at < action.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(action);
    if (!match) throw new TemplateError(`unexpected "${action.slice(at, at + 10)}" in action`);
    at = pattern.lastIndex;
    const [, dq, bq, ch, op, variable, field, number, ident] = match;
    if (dq !== undefined) tokens.push({ kind: "string", text: JSON.parse(dq) as string });
    else if (bq !== undefined) tokens.push({ kind: "string", text: bq.slice(1, -1) });
    else if (ch !== undefined) tokens.push({ kind: "number", text: String((JSON.parse(`"${ch.slice(1, -1)}"`) as string).codePointAt(0)) });
    else if (op !== undefined) tokens.push({ kind: "op", text: op });
    else if (variable !== undefined) tokens.push({ kind: "var", text: variable });
    else if (field !== undefined) tokens.push({ kind: "field", text: field });
    else if (number !== undefined) tokens.push({ kind: "number", text: number });
    else if (ident === "true" || ident === "false") tokens.push({ kind: "bool", value: ident === "true" });
    else if (ident === "nil") tokens.push({ kind: "nil" });
    else if (ident !== undefined) tokens.push({ kind: "ident", text: ident });
  }
  return tokens;
}

class PipelineParser {
  private at = 0;
  constructor(private readonly tokens: Token[]) {}

  parse(): Pipeline {
    const pipe: Pipeline = { declare: [], assign: false, commands: [] };
    const declaration = this.tokens.findIndex((token) => token.kind === "op" && (token.text === ":=" || token.text === "="));
    if (declaration > 0 && this.tokens.slice(0, declaration).every((t) => t.kind === "var" || (t.kind === "op" && t.text === ","))) {
      pipe.declare = this.tokens.slice(0, declaration).flatMap((t) => (t.kind === "var" ? [t.text] : []));
      const op = this.tokens[declaration]!;
      pipe.assign = op.kind === "op" && op.text === "=";
      this.at = declaration + 1;
    }
    pipe.commands = this.commands(false);
    if (this.at < this.tokens.length) throw new TemplateError("unexpected tokens after the pipeline");
    return pipe;
  }

  private commands(nested: boolean): Command[] {
    const commands: Command[] = [{ operands: [] }];
    while (this.at < this.tokens.length) {
      const token = this.tokens[this.at]!;
      if (token.kind === "op" && token.text === ")") {
        if (!nested) throw new TemplateError('unexpected ")"');
        break;
      }
      this.at++;
      if (token.kind === "op" && token.text === "|") {
        commands.push({ operands: [] });
        continue;
      }
      commands[commands.length - 1]!.operands.push(this.operand(token));
    }
    if (commands.some((command) => command.operands.length === 0)) throw new TemplateError("missing command in pipeline");
    return commands;
  }

  private operand(token: Token): Operand {
    switch (token.kind) {
      case "string":
        return { kind: "literal", value: token.text };
      case "number":
        return { kind: "literal", value: Number(token.text) };
      case "bool":
        return { kind: "literal", value: token.value };
      case "nil":
        return { kind: "literal", value: null };
      case "field":
        return { kind: "field", base: "dot", path: token.text === "." ? [] : token.text.slice(1).split(".") };
      case "var": {
        const [name, ...path] = token.text.split(".");
        return { kind: "field", base: { variable: name! }, path };
      }
      case "ident":
        return { kind: "call", name: token.text };
      case "op": {
        if (token.text !== "(") throw new TemplateError(`unexpected "${token.text}"`);
        const commands = this.commands(true);
        const close = this.tokens[this.at++];
        if (!close || close.kind !== "op" || close.text !== ")") throw new TemplateError('unclosed "("');
        const next = this.tokens[this.at];
        const path = next?.kind === "field" && next.text !== "." ? (this.at++, next.text.slice(1).split(".")) : [];
        return { kind: "field", base: { pipe: { declare: [], assign: false, commands } }, path };
      }
    }
  }
}

function parsePipeline(text: string): Pipeline {
  return new PipelineParser(tokenize(text)).parse();
}

/** Builds the tree; `end`, `else` and `else if` close the blocks they belong to. */
function parseNodes(pieces: Piece[]): Node[] {
  let at = 0;
  const list = (): { nodes: Node[]; ended: string } => {
    const nodes: Node[] = [];
    while (at < pieces.length) {
      const piece = pieces[at++]!;
      if (piece.text !== undefined) {
        nodes.push({ kind: "text", text: piece.text });
        continue;
      }
      const action = piece.action!;
      const keyword = /^(if|range|with|else|end)\b\s*(.*)$/s.exec(action);
      if (!keyword) {
        nodes.push({ kind: "action", pipe: parsePipeline(action) });
        continue;
      }
      const [, word, rest] = keyword;
      if (word === "end" || word === "else") return { nodes, ended: word === "else" ? `else ${rest}`.trim() : "end" };
      nodes.push(block(word as "if" | "range" | "with", rest!));
    }
    return { nodes, ended: "" };
  };
  const block = (kind: "if" | "range" | "with", pipeText: string): Node => {
    const pipe = parsePipeline(pipeText);
    const body = list();
    let otherwise: Node[] = [];
    if (body.ended.startsWith("else if ") || body.ended.startsWith("else with ")) {
      const [, nested, rest] = /^else (if|with) (.*)$/s.exec(body.ended)!;
      otherwise = [block(nested as "if" | "with", rest!)];
    } else if (body.ended === "else") {
      const rest = list();
      if (rest.ended !== "end") throw new TemplateError(`missing {{end}} for {{${kind}}}`);
      otherwise = rest.nodes;
    } else if (body.ended !== "end") throw new TemplateError(`missing {{end}} for {{${kind}}}`);
    return { kind, pipe, body: body.nodes, otherwise };
  };
  const top = list();
  if (top.ended !== "") throw new TemplateError(`unexpected {{${top.ended}}}`);
  return top.nodes;
}

/** Go's truth: false, 0, "", nil and empty collections are false. */
export function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (value instanceof Map) return value.size > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/** How Go's fmt prints a value with %v. */
export function goString(value: unknown): string {
  if (value === null || value === undefined) return "<no value>";
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return `[${value.map(goString).join(" ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b));
    return `map[${entries.map(([k, v]) => `${k}:${goString(v)}`).join(" ")}]`;
  }
  return String(value);
}

function sprintf(format: string, args: unknown[]): string {
  let n = 0;
  return format.replace(/%([-+ 0#]*)(\d*)(?:\.(\d+))?([vsdqfxXtT%])/g, (_match, flags: string, width: string, precision: string | undefined, verb: string) => {
    if (verb === "%") return "%";
    const arg = args[n++];
    let out: string;
    switch (verb) {
      case "d":
        out = String(Math.trunc(Number(arg)));
        break;
      case "f":
        out = Number(arg).toFixed(precision === undefined ? 6 : Number(precision));
        break;
      case "q":
        out = JSON.stringify(goString(arg));
        break;
      case "x":
      case "X":
        out = typeof arg === "number" ? arg.toString(16) : Buffer.from(goString(arg)).toString("hex");
        if (verb === "X") out = out.toUpperCase();
        break;
      case "T":
        out = arg === null ? "<nil>" : Array.isArray(arg) ? "[]interface {}" : typeof arg === "number" ? "int" : typeof arg;
        break;
      default:
        out = goString(arg);
        if (verb === "s" && precision !== undefined) out = out.slice(0, Number(precision));
    }
    if (!width) return out;
    if (flags.includes("-")) return out.padEnd(Number(width));
    return flags.includes("0") && /^-?\d/.test(out) ? out.padStart(Number(width), "0") : out.padStart(Number(width));
  });
}

function compare(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
  throw new TemplateError(`incompatible types for comparison: ${goString(a)} and ${goString(b)}`);
}

const BUILTINS: Record<string, TemplateFunction> = {
  and: (...args) => args.find((arg) => !truthy(arg)) ?? args[args.length - 1],
  or: (...args) => args.find((arg) => truthy(arg)) ?? args[args.length - 1],
  not: (arg) => !truthy(arg),
  eq: (a, ...rest) => rest.some((b) => a === b),
  ne: (a, b) => a !== b,
  lt: (a, b) => compare(a, b) < 0,
  le: (a, b) => compare(a, b) <= 0,
  gt: (a, b) => compare(a, b) > 0,
  ge: (a, b) => compare(a, b) >= 0,
  len: (value) => {
    if (typeof value === "string" || Array.isArray(value)) return value.length;
    if (value && typeof value === "object") return Object.keys(value).length;
    throw new TemplateError(`len of ${goString(value)}`);
  },
  index: (value, ...keys) => keys.reduce<unknown>((current, key) => (current as Record<string, unknown> | undefined)?.[String(key)] ?? null, value),
  print: (...args) => args.map(goString).join(""),
  println: (...args) => `${args.map(goString).join(" ")}\n`,
  printf: (format, ...args) => sprintf(String(format), args),
};

class Executor {
  private readonly scopes: Map<string, unknown>[];

  constructor(
    private readonly functions: Readonly<Record<string, TemplateFunction>>,
    root: unknown,
  ) {
    this.scopes = [new Map([["$", root]])];
  }

  run(nodes: Node[], dot: unknown): string {
    let out = "";
    for (const node of nodes) {
      switch (node.kind) {
        case "text":
          out += node.text;
          break;
        case "action": {
          const value = this.pipeline(node.pipe, dot);
          if (node.pipe.declare.length === 0) out += goString(value);
          break;
        }
        case "if":
        case "with": {
          this.scopes.push(new Map());
          const value = this.pipeline(node.pipe, dot);
          out += truthy(value) ? this.run(node.body, node.kind === "with" ? value : dot) : this.run(node.otherwise, dot);
          this.scopes.pop();
          break;
        }
        case "range":
          out += this.range(node, dot);
          break;
      }
    }
    return out;
  }

  private range(node: Extract<Node, { kind: "range" }>, dot: unknown): string {
    this.scopes.push(new Map());
    const { declare } = node.pipe;
    const value = this.pipeline({ ...node.pipe, declare: [] }, dot);
    const entries: [unknown, unknown][] = Array.isArray(value)
      ? value.map((item, i) => [i, item])
      : value && typeof value === "object"
        ? Object.keys(value).sort().map((key) => [key, (value as Record<string, unknown>)[key]])
        : typeof value === "number"
          ? Array.from({ length: value }, (_, i) => [i, i])
          : [];
    let out = "";
    for (const [key, item] of entries) {
      const scope = this.scopes[this.scopes.length - 1]!;
      if (declare.length === 1) scope.set(declare[0]!, item);
      if (declare.length === 2) {
        scope.set(declare[0]!, key);
        scope.set(declare[1]!, item);
      }
      out += this.run(node.body, item);
    }
    if (entries.length === 0) out += this.run(node.otherwise, dot);
    this.scopes.pop();
    return out;
  }

  private lookup(name: string): unknown {
    for (let i = this.scopes.length - 1; i >= 0; i--) if (this.scopes[i]!.has(name)) return this.scopes[i]!.get(name);
    throw new TemplateError(`undefined variable "${name}"`);
  }

  private pipeline(pipe: Pipeline, dot: unknown): unknown {
    let value: unknown;
    let first = true;
    for (const command of pipe.commands) {
      value = this.command(command, dot, first ? [] : [value]);
      first = false;
    }
    if (pipe.declare.length > 0) {
      if (pipe.assign) {
        const name = pipe.declare[0]!;
        const scope = this.scopes.findLast((s) => s.has(name));
        if (!scope) throw new TemplateError(`undefined variable "${name}"`);
        scope.set(name, value);
      } else this.scopes[this.scopes.length - 1]!.set(pipe.declare[0]!, value);
    }
    return value;
  }

  private command(command: Command, dot: unknown, piped: unknown[]): unknown {
    const [head, ...rest] = command.operands;
    if (head!.kind === "call") {
      const fn = this.functions[head!.name] ?? BUILTINS[head!.name];
      if (!fn) throw new TemplateError(`function "${head!.name}" not defined`);
      return fn(...rest.map((operand) => this.operand(operand, dot)), ...piped);
    }
    if (rest.length > 0 || piped.length > 0) throw new TemplateError("can't give arguments to a non-function");
    return this.operand(head!, dot);
  }

  private operand(operand: Operand, dot: unknown): unknown {
    switch (operand.kind) {
      case "literal":
        return operand.value;
      case "call": {
        const fn = this.functions[operand.name] ?? BUILTINS[operand.name];
        if (!fn) throw new TemplateError(`function "${operand.name}" not defined`);
        return fn();
      }
      case "field": {
        const base = operand.base === "dot" ? dot : "variable" in operand.base ? this.lookup(operand.base.variable) : this.pipeline(operand.base.pipe, dot);
        return operand.path.reduce<unknown>((current, key) => {
          if (current === null || current === undefined || typeof current !== "object") throw new TemplateError(`can't evaluate field ${key} in ${goString(current)}`);
          return (current as Record<string, unknown>)[key] ?? null;
        }, base);
      }
    }
  }
}

export interface CompiledTemplate {
  render(data: unknown, functions: Readonly<Record<string, TemplateFunction>>): string;
}

/** Parses `source` once; each render runs it against data and functions. */
export function compileTemplate(source: string, delimiters: { left: string; right: string } = { left: "{{", right: "}}" }): CompiledTemplate {
  const nodes = parseNodes(lex(source, delimiters.left, delimiters.right));
  return { render: (data, functions) => new Executor(functions, data).run(nodes, data) };
}
