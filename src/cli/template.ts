/**
 * The `-t` flag's Go templates (text/template), the subset scripts use with
 * Nomad's CLI: `{{.Field.Sub}}`, `{{.}}`, `$var`, `{{range}}` (with
 * `$i, $v :=`), `{{if}}`/`{{else if}}`/`{{else}}`, `{{with}}`, `{{end}}`,
 * pipelines (`{{.X | printf "%s"}}`), the builtins printf, len, index, eq,
 * ne, lt, le, gt, ge, and, or, not, and `{{-`/`-}}` trimming. Values print
 * as Go's fmt prints them (`map[k:v]`, `[a b]`, `<no value>`).
 */
import { UsageError } from "./flags.ts";

type Value = unknown;

interface Scope {
  dot: Value;
  vars: Map<string, Value>;
}

type Node =
  | { kind: "text"; text: string }
  | { kind: "action"; pipe: string }
  | { kind: "if" | "with"; branches: { pipe: string | null; body: Node[] }[] }
  | { kind: "range"; pipe: string; keyVar?: string; valueVar?: string; body: Node[]; otherwise: Node[] };

/** Go's fmt %v for the JSON values the API returns. */
export function goString(value: Value): string {
  if (value === undefined) return "<no value>";
  if (value === null) return "<nil>";
  if (Array.isArray(value)) return `[${value.map(goString).join(" ")}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, Value>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, v]) => `${k}:${goString(v)}`).join(" ")}]`;
  }
  return String(value);
}

function truthy(value: Value): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === "") return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return true;
}

/** Go's printf for the verbs scripts use: %s %v %d %q %t %x %%, with widths such as %-10s. */
function sprintf(format: string, args: Value[]): string {
  let next = 0;
  return format.replace(/%([-0]?)(\d*)(?:\.(\d+))?([svdqtxf%])/g, (_, flag: string, width: string, precision: string | undefined, verb: string) => {
    if (verb === "%") return "%";
    const arg = args[next++];
    let text: string;
    if (verb === "q") text = JSON.stringify(goString(arg));
    else if (verb === "x") text = typeof arg === "number" ? arg.toString(16) : Buffer.from(goString(arg)).toString("hex");
    else if (verb === "f") text = Number(arg).toFixed(precision === undefined ? 6 : Number(precision));
    else text = goString(arg);
    if (verb === "s" && precision !== undefined) text = text.slice(0, Number(precision));
    const size = Number(width || 0);
    return flag === "-" ? text.padEnd(size) : text.padStart(size, flag === "0" ? "0" : " ");
  });
}

const compare = (a: Value, b: Value) => (a as number) - (b as number);

const FUNCS: Record<string, (...args: Value[]) => Value> = {
  printf: (format, ...args) => sprintf(String(format), args),
  print: (...args) => args.map(goString).join(""),
  println: (...args) => `${args.map(goString).join(" ")}\n`,
  len: (value) => (Array.isArray(value) || typeof value === "string" ? value.length : value && typeof value === "object" ? Object.keys(value).length : 0),
  index: (value, ...keys) => keys.reduce((current: Value, key) => (current as Record<string, Value> | undefined)?.[String(key)], value),
  eq: (a, ...rest) => rest.some((b) => a === b),
  ne: (a, b) => a !== b,
  lt: (a, b) => compare(a, b) < 0,
  le: (a, b) => compare(a, b) <= 0,
  gt: (a, b) => compare(a, b) > 0,
  ge: (a, b) => compare(a, b) >= 0,
  and: (...args) => args.find((arg) => !truthy(arg)) ?? args[args.length - 1],
  or: (...args) => args.find(truthy) ?? args[args.length - 1],
  not: (value) => !truthy(value),
  json: (value) => JSON.stringify(value),
};

/** Splits a pipeline's command into its words, keeping quoted strings and parenthesised groups whole. */
function words(text: string): string[] {
  const out: string[] = [];
  const pattern = /"(?:[^"\\]|\\.)*"|`[^`]*`|\([^()]*\)(?:\.[\w.]+)?|[^\s()]+/g;
  for (const match of text.matchAll(pattern)) out.push(match[0]);
  return out;
}

function splitPipe(pipe: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let current = "";
  for (const char of pipe) {
    if (quote) {
      if (char === quote) quote = null;
    } else if (char === '"' || char === "`") quote = char;
    else if (char === "(") depth++;
    else if (char === ")") depth--;
    else if (char === "|" && depth === 0) {
      parts.push(current.trim());
      current = "";
      continue;
    }
    current += char;
  }
  parts.push(current.trim());
  return parts;
}

function field(value: Value, path: string): Value {
  return path
    .split(".")
    .filter((part) => part !== "")
    .reduce((current: Value, part) => (current !== null && typeof current === "object" ? (current as Record<string, Value>)[part] : undefined), value);
}

function operand(word: string, scope: Scope): Value {
  if (word.startsWith("(")) {
    // (pipeline).Field: the group's value, then the field of it.
    const close = word.lastIndexOf(")");
    return field(evalPipe(word.slice(1, close), scope), word.slice(close + 1));
  }
  if (word.startsWith('"')) return JSON.parse(word) as string;
  if (word.startsWith("`")) return word.slice(1, -1);
  if (word === "true" || word === "false") return word === "true";
  if (word === "nil") return null;
  if (/^-?\d+(\.\d+)?$/.test(word)) return Number(word);
  if (word.startsWith(".")) return field(scope.dot, word);
  if (word.startsWith("$")) {
    const [name, ...rest] = word.split(".");
    if (!scope.vars.has(name!)) throw new UsageError(`template: undefined variable "${name}"`);
    return field(scope.vars.get(name!), rest.join("."));
  }
  throw new UsageError(`template: function "${word}" not defined`);
}

function evalCommand(command: string, scope: Scope, piped: Value[]): Value {
  const [head, ...rest] = words(command);
  if (head === undefined) throw new UsageError("template: empty command");
  const fn = FUNCS[head];
  if (fn) return fn(...rest.map((word) => operand(word, scope)), ...piped);
  if (/^[A-Za-z_]\w*$/.test(head) && !["true", "false", "nil"].includes(head)) throw new UsageError(`template: function "${head}" not defined`);
  if (rest.length > 0 || piped.length > 0) throw new UsageError(`template: can't give arguments to non-function ${head}`);
  return operand(head, scope);
}

function evalPipe(pipe: string, scope: Scope): Value {
  const declaration = /^(\$\w*)\s*:?=\s*(.*)$/s.exec(pipe);
  if (declaration) {
    const value = evalPipe(declaration[2]!, scope);
    scope.vars.set(declaration[1]!, value);
    return value;
  }
  let piped: Value[] = [];
  for (const command of splitPipe(pipe)) piped = [evalCommand(command, scope, piped)];
  return piped[0];
}

/** Tokens: text and actions, with `{{-`/`-}}` trimming applied. */
function tokenize(source: string): { kind: "text" | "action"; value: string }[] {
  const tokens: { kind: "text" | "action"; value: string }[] = [];
  let rest = source;
  while (rest.length > 0) {
    const open = rest.indexOf("{{");
    if (open < 0) {
      tokens.push({ kind: "text", value: rest });
      break;
    }
    let text = rest.slice(0, open);
    const close = rest.indexOf("}}", open);
    if (close < 0) throw new UsageError("template: unclosed action");
    let action = rest.slice(open + 2, close);
    if (action.startsWith("- ")) {
      text = text.trimEnd();
      action = action.slice(1);
    }
    rest = rest.slice(close + 2);
    if (action.endsWith(" -")) {
      action = action.slice(0, -1);
      rest = rest.trimStart();
    }
    if (text) tokens.push({ kind: "text", value: text });
    if (!/^\s*\/\*/.test(action)) tokens.push({ kind: "action", value: action.trim() });
  }
  return tokens;
}

function parse(source: string): Node[] {
  const tokens = tokenize(source);
  let at = 0;
  // Parses until {{end}} / {{else}}; returns the nodes and the keyword that stopped it.
  const block = (): { nodes: Node[]; stop: string | null } => {
    const nodes: Node[] = [];
    while (at < tokens.length) {
      const token = tokens[at++]!;
      if (token.kind === "text") {
        nodes.push({ kind: "text", text: token.value });
        continue;
      }
      const [keyword = ""] = token.value.split(/\s+/, 1);
      const argument = token.value.slice(keyword.length).trim();
      if (keyword === "end" || keyword === "else") return { nodes, stop: token.value };
      if (keyword === "if" || keyword === "with") {
        const branches: { pipe: string | null; body: Node[] }[] = [];
        let pipe: string | null = argument;
        for (;;) {
          const { nodes: body, stop } = block();
          branches.push({ pipe, body });
          if (stop === null) throw new UsageError(`template: unexpected EOF in ${keyword}`);
          if (stop === "end") break;
          const elseIf = /^else\s+(?:if|with)\s+(.*)$/s.exec(stop);
          pipe = elseIf ? elseIf[1]! : null;
          if (!elseIf && stop !== "else") throw new UsageError(`template: unexpected "${stop}"`);
        }
        nodes.push({ kind: keyword, branches });
      } else if (keyword === "range") {
        const declared = /^(\$\w+)\s*(?:,\s*(\$\w+))?\s*:=\s*(.*)$/s.exec(argument);
        const first = block();
        let otherwise: Node[] = [];
        if (first.stop === "else") {
          const second = block();
          if (second.stop !== "end") throw new UsageError("template: range needs {{end}}");
          otherwise = second.nodes;
        } else if (first.stop !== "end") throw new UsageError("template: range needs {{end}}");
        const node: Node = { kind: "range", pipe: declared ? declared[3]! : argument, body: first.nodes, otherwise };
        if (declared) {
          if (declared[2]) Object.assign(node, { keyVar: declared[1], valueVar: declared[2] });
          else Object.assign(node, { valueVar: declared[1] });
        }
        nodes.push(node);
      } else nodes.push({ kind: "action", pipe: token.value });
    }
    return { nodes, stop: null };
  };
  const { nodes, stop } = block();
  if (stop !== null) throw new UsageError(`template: unexpected {{${stop}}}`);
  return nodes;
}

function execute(nodes: readonly Node[], scope: Scope): string {
  let out = "";
  for (const node of nodes) {
    if (node.kind === "text") out += node.text;
    else if (node.kind === "action") {
      const isDeclaration = /^\$\w*\s*:?=/.test(node.pipe);
      const value = evalPipe(node.pipe, scope);
      if (!isDeclaration) out += goString(value);
    } else if (node.kind === "if" || node.kind === "with") {
      for (const branch of node.branches) {
        const value = branch.pipe === null ? true : evalPipe(branch.pipe, scope);
        if (!truthy(value)) continue;
        out += execute(branch.body, node.kind === "with" && branch.pipe !== null ? { ...scope, dot: value } : scope);
        break;
      }
    } else if (node.kind === "range") {
      const value = evalPipe(node.pipe, scope);
      const entries: [Value, Value][] = Array.isArray(value)
        ? value.map((item, i) => [i, item])
        : value && typeof value === "object"
          ? Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))
          : [];
      if (entries.length === 0) out += execute(node.otherwise, scope);
      for (const [key, item] of entries) {
        const vars = new Map(scope.vars);
        if (node.keyVar) vars.set(node.keyVar, key);
        if (node.valueVar) vars.set(node.valueVar, item);
        out += execute(node.body, { dot: item, vars });
      }
    }
  }
  return out;
}

/** Renders `template` over `data` as Go's text/template would; a template error is a UsageError. */
export function renderTemplate(template: string, data: Value): string {
  return execute(parse(template), { dot: data, vars: new Map([["$", data]]) });
}
