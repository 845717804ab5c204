/**
 * HCL2's expression and template grammar (hclsyntax's spec), parsed from
 * text into a small tree for expressions.ts to evaluate.
 *
 * Job files reach drover through HashiCorp's own parser (lib/hcl.ts), which
 * checks the whole file's syntax and hands over every attribute that is not a
 * plain literal as template text: `"${upper(var.x)}"`, `"web-${count.index}"`,
 * `"%{for s in var.l}${s}%{endfor}"`. Their literal parts are already
 * unescaped, except `$${` and `%%{`; that is `parseTemplate(text, "raw")`.
 * Quoted strings inside an expression keep HCL's backslash escapes
 * ("quoted"); heredocs inside an expression are read here too.
 *
 *   text ──> Parser (one cursor over the text, tokens read on demand)
 *        ──> Expr: literals, templates, traversals, calls, operators,
 *            conditionals, for expressions, splats, tuples, objects
 */
import { HclEvalError, type Value } from "./values.ts";

export type Expr =
  | { kind: "literal"; value: Value }
  | { kind: "template"; parts: TemplatePart[] }
  /** `root.a["b"][0]`: a name and the steps HCL counts as one traversal; `source` is its text. */
  | { kind: "traversal"; root: string; steps: Step[]; source: string }
  | { kind: "attribute"; target: Expr; name: string }
  | { kind: "index"; target: Expr; key: Expr }
  /** `source[*].rest`: `each` is applied to every element, the element being `{kind: "item"}`. */
  | { kind: "splat"; source: Expr; each: Expr }
  | { kind: "item" }
  | { kind: "call"; name: string; args: Expr[]; expand: boolean }
  | { kind: "tuple"; items: Expr[] }
  | { kind: "object"; items: { key: Expr; value: Expr }[] }
  | { kind: "conditional"; condition: Expr; then: Expr; otherwise: Expr }
  | { kind: "unary"; op: "!" | "-"; operand: Expr }
  | { kind: "binary"; op: BinaryOp; left: Expr; right: Expr }
  | ForExpr;

export interface ForExpr {
  kind: "for";
  keyVar?: string;
  valueVar: string;
  collection: Expr;
  /** Set for `{for ...}`; absent for `[for ...]`. */
  key?: Expr;
  value: Expr;
  condition?: Expr;
  /** `value...`: values of equal keys gathered into lists. */
  group: boolean;
}

export type Step = { name: string } | { key: Value };

export type TemplatePart =
  | { kind: "text"; text: string }
  | { kind: "interpolation"; expr: Expr }
  | { kind: "if"; condition: Expr; then: TemplatePart[]; otherwise: TemplatePart[] }
  | { kind: "for"; keyVar?: string; valueVar: string; collection: Expr; body: TemplatePart[] };

export type BinaryOp = "||" | "&&" | "==" | "!=" | "<" | ">" | "<=" | ">=" | "+" | "-" | "*" | "/" | "%";

/** Binding strength of each binary operator (higher binds tighter), as hclsyntax orders them. */
const PRECEDENCE: Readonly<Record<BinaryOp, number>> = {
  "||": 1,
  "&&": 2,
  "==": 3,
  "!=": 3,
  "<": 4,
  ">": 4,
  "<=": 4,
  ">=": 4,
  "+": 5,
  "-": 5,
  "*": 6,
  "/": 6,
  "%": 6,
};
const OPERATORS = Object.keys(PRECEDENCE).sort((a, b) => b.length - a.length) as BinaryOp[];

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_-]*/y;
const NUMBER = /[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEREDOC = /<<(-?)([A-Za-z_][A-Za-z0-9_-]*)\r?\n/y;

/** A syntax problem in an expression, with the offset where it was found. */
export class HclExpressionSyntaxError extends HclEvalError {
  override name = "HclExpressionSyntaxError";
}

interface StripMarks {
  /** `~` right after the opening `${`/`%{`: trims the whitespace before. */
  before: boolean;
  /** `~` right before the closing `}`: trims the whitespace after. */
  after: boolean;
}

type Directive =
  | { kind: "if"; condition: Expr }
  | { kind: "else" }
  | { kind: "endif" }
  | { kind: "for"; keyVar?: string; valueVar: string; collection: Expr }
  | { kind: "endfor" };

class Parser {
  pos = 0;

  constructor(private readonly src: string) {}

  fail(message: string): never {
    throw new HclExpressionSyntaxError(`${message} (at "${this.src.slice(this.pos, this.pos + 20)}")`);
  }

  /** Skips spaces, newlines and comments. */
  space(): void {
    for (;;) {
      const ch = this.src[this.pos];
      if (ch === " " || ch === "\t" || ch === "\n" || ch === "\r") this.pos++;
      else if (ch === "#" || (ch === "/" && this.src[this.pos + 1] === "/")) {
        const end = this.src.indexOf("\n", this.pos);
        this.pos = end === -1 ? this.src.length : end;
      } else if (ch === "/" && this.src[this.pos + 1] === "*") {
        const end = this.src.indexOf("*/", this.pos + 2);
        this.pos = end === -1 ? this.src.length : end + 2;
      } else return;
    }
  }

  /** True (and consumed) when `token` comes next after space. */
  eat(token: string): boolean {
    this.space();
    if (!this.src.startsWith(token, this.pos)) return false;
    // `=` must not take the first half of `==` or `=>`; `.` not the first of `...`.
    if (token === "=" && (this.src[this.pos + 1] === "=" || this.src[this.pos + 1] === ">")) return false;
    if (token === "." && this.src.startsWith("...", this.pos)) return false;
    this.pos += token.length;
    return true;
  }

  expect(token: string): void {
    if (!this.eat(token)) this.fail(`expected "${token}"`);
  }

  identifier(): string | undefined {
    this.space();
    IDENTIFIER.lastIndex = this.pos;
    const match = IDENTIFIER.exec(this.src);
    if (!match) return undefined;
    this.pos += match[0].length;
    return match[0];
  }

  /** The next identifier without consuming it. */
  peekIdentifier(): string | undefined {
    const at = this.pos;
    const name = this.identifier();
    this.pos = at;
    return name;
  }

  expression(): Expr {
    const condition = this.binary(0);
    if (!this.eat("?")) return condition;
    const then = this.expression();
    this.expect(":");
    const otherwise = this.expression();
    return { kind: "conditional", condition, then, otherwise };
  }

  /** The binary operator next (space and comments skipped first, so `//` is never a division). */
  private binaryOperator(): BinaryOp | undefined {
    this.space();
    return OPERATORS.find((candidate) => this.src.startsWith(candidate, this.pos));
  }

  private binary(minimum: number): Expr {
    let left = this.unary();
    for (;;) {
      const op = this.binaryOperator();
      if (op === undefined || PRECEDENCE[op] <= minimum) return left;
      this.pos += op.length;
      const right = this.binary(PRECEDENCE[op]);
      left = { kind: "binary", op, left, right };
    }
  }

  private unary(): Expr {
    this.space();
    const ch = this.src[this.pos];
    if ((ch === "!" && this.src[this.pos + 1] !== "=") || ch === "-") {
      this.pos++;
      const operand = this.unary();
      return { kind: "unary", op: ch, operand };
    }
    return this.postfix(this.primary());
  }

  private primary(): Expr {
    this.space();
    const start = this.pos;
    const ch = this.src[this.pos];
    if (ch === undefined) this.fail("expected an expression");
    if (ch === '"') {
      this.pos++;
      return { kind: "template", parts: this.templateParts("quoted") };
    }
    if (ch === "<" && this.src[this.pos + 1] === "<") return this.heredoc();
    if (ch === "(") {
      this.pos++;
      const inner = this.expression();
      this.expect(")");
      return inner;
    }
    if (ch === "[") {
      this.pos++;
      return this.peekIdentifier() === "for" && this.isForHead() ? this.forExpression("]") : this.tuple();
    }
    if (ch === "{") {
      this.pos++;
      return this.peekIdentifier() === "for" && this.isForHead() ? this.forExpression("}") : this.object();
    }
    NUMBER.lastIndex = this.pos;
    const number = NUMBER.exec(this.src);
    if (number) {
      this.pos += number[0].length;
      return { kind: "literal", value: Number(number[0]) };
    }
    const name = this.identifier();
    if (name === undefined) this.fail("expected an expression");
    if (name === "true" || name === "false") return { kind: "literal", value: name === "true" };
    if (name === "null") return { kind: "literal", value: null };
    if (this.eat("(")) return this.call(name);
    return this.traversal(name, start);
  }

  /** `for` starts a for expression when an identifier (the variable) follows it. */
  private isForHead(): boolean {
    const at = this.pos;
    this.identifier();
    const variable = this.identifier();
    this.pos = at;
    return variable !== undefined;
  }

  /** The root and the attribute and literal-index steps that follow it (a traversal). */
  private traversal(root: string, start: number): Expr {
    const steps: Step[] = [];
    for (;;) {
      const at = this.pos;
      if (this.eat(".")) {
        const name = this.identifier();
        if (name !== undefined) {
          steps.push({ name });
          continue;
        }
        const index = /[0-9]+/y;
        index.lastIndex = this.pos;
        const digits = index.exec(this.src);
        if (digits) {
          this.pos += digits[0].length;
          steps.push({ key: Number(digits[0]) });
          continue;
        }
        this.pos = at;
        break;
      }
      if (this.eat("[")) {
        this.space();
        const literal = this.literalKey();
        if (literal !== undefined && this.eat("]")) {
          steps.push({ key: literal.value });
          continue;
        }
        this.pos = at;
        break;
      }
      break;
    }
    return { kind: "traversal", root, steps, source: this.src.slice(start, this.pos).trim() };
  }

  /** A number or a plain quoted string as an index key, or undefined (the cursor is then unchanged). */
  private literalKey(): { value: Value } | undefined {
    const at = this.pos;
    NUMBER.lastIndex = this.pos;
    const number = NUMBER.exec(this.src);
    if (number) {
      this.pos += number[0].length;
      return { value: Number(number[0]) };
    }
    if (this.src[this.pos] === '"') {
      this.pos++;
      const parts = this.templateParts("quoted");
      if (parts.every((part) => part.kind === "text")) return { value: parts.map((part) => (part as { text: string }).text).join("") };
    }
    this.pos = at;
    return undefined;
  }

  private postfix(target: Expr): Expr {
    for (;;) {
      const at = this.pos;
      if (this.eat("[")) {
        if (this.eat("*")) {
          this.expect("]");
          return { kind: "splat", source: target, each: this.splatSteps({ kind: "item" }, false) };
        }
        const key = this.expression();
        this.expect("]");
        target = { kind: "index", target, key };
        continue;
      }
      if (this.eat(".")) {
        if (this.eat("*")) return { kind: "splat", source: target, each: this.splatSteps({ kind: "item" }, true) };
        const name = this.identifier();
        if (name !== undefined) {
          target = { kind: "attribute", target, name };
          continue;
        }
        const digits = /[0-9]+/y;
        digits.lastIndex = this.pos;
        const index = digits.exec(this.src);
        if (index) {
          this.pos += index[0].length;
          target = { kind: "index", target, key: { kind: "literal", value: Number(index[0]) } };
          continue;
        }
        this.pos = at;
      }
      return target;
    }
  }

  /** The steps after a splat, applied to each element; the legacy `.*` takes attribute steps only. */
  private splatSteps(each: Expr, attributesOnly: boolean): Expr {
    for (;;) {
      const at = this.pos;
      if (this.eat(".")) {
        const name = this.identifier();
        if (name !== undefined) {
          each = { kind: "attribute", target: each, name };
          continue;
        }
        this.pos = at;
        return each;
      }
      if (!attributesOnly && this.eat("[")) {
        if (this.src.startsWith("*", this.pos)) {
          this.pos = at;
          return each;
        }
        const key = this.expression();
        this.expect("]");
        each = { kind: "index", target: each, key };
        continue;
      }
      return each;
    }
  }

  private call(name: string): Expr {
    const args: Expr[] = [];
    let expand = false;
    while (!this.eat(")")) {
      args.push(this.expression());
      if (this.eat("...")) expand = true;
      if (!this.eat(",")) {
        this.expect(")");
        break;
      }
    }
    return { kind: "call", name, args, expand };
  }

  private tuple(): Expr {
    const items: Expr[] = [];
    while (!this.eat("]")) {
      items.push(this.expression());
      if (!this.eat(",")) {
        this.expect("]");
        break;
      }
    }
    return { kind: "tuple", items };
  }

  private object(): Expr {
    const items: { key: Expr; value: Expr }[] = [];
    while (!this.eat("}")) {
      const at = this.pos;
      const name = this.identifier();
      let key: Expr;
      // A bare name before `=` or `:` is the key itself, not a variable.
      if (name !== undefined && (this.peekToken("=") || this.peekToken(":"))) key = { kind: "literal", value: name };
      else {
        this.pos = at;
        key = this.expression();
      }
      if (!this.eat("=") && !this.eat(":")) this.fail('expected "=" after an object key');
      items.push({ key, value: this.expression() });
      this.eat(",");
    }
    return { kind: "object", items };
  }

  private peekToken(token: string): boolean {
    const at = this.pos;
    const found = this.eat(token);
    this.pos = at;
    return found;
  }

  /** After `[for` or `{for`: `k, v in coll : [key =>] value[...] [if cond]` and the closer. */
  private forExpression(closer: "]" | "}"): Expr {
    this.identifier();
    const { keyVar, valueVar, collection } = this.forHead();
    this.expect(":");
    let key: Expr | undefined;
    let value = this.expression();
    let group = false;
    if (closer === "}") {
      this.expect("=>");
      key = value;
      value = this.expression();
      group = this.eat("...");
    }
    let condition: Expr | undefined;
    if (this.peekIdentifier() === "if") {
      this.identifier();
      condition = this.expression();
    }
    this.expect(closer);
    return { kind: "for", keyVar, valueVar, collection, key, value, condition, group };
  }

  /** `k, v in coll` or `v in coll` (after the `for` keyword). */
  forHead(): { keyVar?: string; valueVar: string; collection: Expr } {
    const first = this.identifier();
    if (first === undefined) this.fail("expected a variable name after for");
    let keyVar: string | undefined;
    let valueVar = first;
    if (this.eat(",")) {
      keyVar = first;
      valueVar = this.identifier() ?? this.fail("expected a second variable name");
    }
    if (this.identifier() !== "in") this.fail('expected "in"');
    return { keyVar, valueVar, collection: this.expression() };
  }

  private heredoc(): Expr {
    HEREDOC.lastIndex = this.pos;
    const head = HEREDOC.exec(this.src);
    if (!head) this.fail("expected a heredoc");
    const [, dash, marker] = head;
    const bodyStart = this.pos + head[0].length;
    const end = new RegExp(`^[ \\t]*${marker}[ \\t]*$`, "m");
    const rest = this.src.slice(bodyStart);
    const close = end.exec(rest);
    if (!close) this.fail(`no closing ${marker} for the heredoc`);
    let body = rest.slice(0, close.index);
    this.pos = bodyStart + close.index + close[0].length;
    if (dash === "-") body = dedent(body);
    return { kind: "template", parts: parseTemplate(body, "raw").parts };
  }

  /**
   * Template text up to its end: the closing quote ("quoted") or the end of
   * the text ("raw"). Directives nest: a nested sequence (templateSequence)
   * ends at its `%{else}`/`%{endif}`/`%{endfor}`, which it returns.
   */
  templateParts(mode: "quoted" | "raw"): TemplatePart[] {
    const { parts, ended } = this.templateSequence(mode);
    if (ended !== undefined) this.fail(`unexpected %{${ended.kind}}`);
    return parts;
  }

  private templateSequence(mode: "quoted" | "raw"): { parts: TemplatePart[]; ended?: Directive; marks?: StripMarks } {
    const parts: TemplatePart[] = [];
    let text = "";
    let stripNext = false;
    const flush = (stripBefore: boolean) => {
      let chunk = text;
      if (stripNext) chunk = chunk.replace(/^\s+/, "");
      if (stripBefore) chunk = chunk.replace(/\s+$/, "");
      if (chunk !== "") parts.push({ kind: "text", text: chunk });
      text = "";
      stripNext = false;
    };
    for (;;) {
      const ch = this.src[this.pos];
      if (ch === undefined) {
        if (mode === "quoted") this.fail("unterminated string");
        flush(false);
        return { parts };
      }
      if (mode === "quoted" && ch === '"') {
        this.pos++;
        flush(false);
        return { parts };
      }
      if (mode === "quoted" && ch === "\\") {
        text += this.escape();
        continue;
      }
      if ((ch === "$" || ch === "%") && this.src[this.pos + 1] === ch && this.src[this.pos + 2] === "{") {
        text += `${ch}{`;
        this.pos += 3;
        continue;
      }
      if (ch === "$" && this.src[this.pos + 1] === "{") {
        this.pos += 2;
        const before = this.eatStrip();
        flush(before);
        const expr = this.expression();
        const after = this.eatStrip();
        this.expect("}");
        parts.push({ kind: "interpolation", expr });
        stripNext = after;
        continue;
      }
      if (ch === "%" && this.src[this.pos + 1] === "{") {
        this.pos += 2;
        const before = this.eatStrip();
        flush(before);
        const directive = this.directive();
        const after = this.eatStrip();
        this.expect("}");
        if (directive.kind === "else" || directive.kind === "endif" || directive.kind === "endfor") {
          return { parts, ended: directive, marks: { before, after } };
        }
        parts.push(this.directiveBody(mode, directive));
        stripNext = this.lastStripAfter;
        continue;
      }
      text += ch;
      this.pos++;
    }
  }

  /** Whether the closing directive of the last block directive asked to trim what follows it. */
  private lastStripAfter = false;

  private directiveBody(mode: "quoted" | "raw", directive: Directive): TemplatePart {
    if (directive.kind === "if") {
      const then = this.templateSequence(mode);
      let otherwise: TemplatePart[] = [];
      let end = then;
      if (then.ended?.kind === "else") {
        end = this.templateSequence(mode);
        otherwise = end.parts;
      }
      if (end.ended?.kind !== "endif") this.fail("expected %{endif}");
      this.lastStripAfter = end.marks?.after ?? false;
      return { kind: "if", condition: directive.condition, then: then.parts, otherwise };
    }
    if (directive.kind !== "for") this.fail(`unexpected %{${directive.kind}}`);
    const body = this.templateSequence(mode);
    if (body.ended?.kind !== "endfor") this.fail("expected %{endfor}");
    this.lastStripAfter = body.marks?.after ?? false;
    return { kind: "for", keyVar: directive.keyVar, valueVar: directive.valueVar, collection: directive.collection, body: body.parts };
  }

  private directive(): Directive {
    const keyword = this.identifier();
    switch (keyword) {
      case "if":
        return { kind: "if", condition: this.expression() };
      case "else":
      case "endif":
      case "endfor":
        return { kind: keyword };
      case "for":
        return { kind: "for", ...this.forHead() };
      default:
        return this.fail(`unknown template directive "%{${keyword ?? ""}"`);
    }
  }

  private eatStrip(): boolean {
    this.space();
    if (this.src[this.pos] !== "~") return false;
    this.pos++;
    return true;
  }

  /** One backslash escape of a quoted string. */
  private escape(): string {
    const next = this.src[this.pos + 1];
    this.pos += 2;
    switch (next) {
      case "n":
        return "\n";
      case "r":
        return "\r";
      case "t":
        return "\t";
      case '"':
        return '"';
      case "\\":
        return "\\";
      case "u":
      case "U": {
        const length = next === "u" ? 4 : 8;
        const hex = this.src.slice(this.pos, this.pos + length);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== length) this.fail("invalid unicode escape");
        this.pos += length;
        return String.fromCodePoint(parseInt(hex, 16));
      }
      default:
        return this.fail(`invalid escape "\\${next ?? ""}"`);
    }
  }
}

/** `<<-` heredocs: the lines lose the indentation they all share. */
function dedent(body: string): string {
  const lines = body.split("\n");
  const widths = lines.filter((line) => line.trim() !== "").map((line) => /^[ \t]*/.exec(line)![0].length);
  const cut = widths.length > 0 ? Math.min(...widths) : 0;
  return lines.map((line) => line.slice(cut)).join("\n");
}

/** One whole expression (`-var` values, type constraints). */
export function parseExpression(text: string): Expr {
  const parser = new Parser(text);
  const expr = parser.expression();
  parser.space();
  if (parser.pos !== text.length) parser.fail("unexpected text after the expression");
  return expr;
}

/** A template: a string value of the job document ("raw") or a quoted string's inside ("quoted"). */
export function parseTemplate(text: string, mode: "quoted" | "raw"): { parts: TemplatePart[] } {
  const parser = new Parser(text);
  return { parts: parser.templateParts(mode) };
}

/** True when the text holds something to evaluate (an interpolation, a directive or an escape to undo). */
export const isTemplate = (text: string): boolean => text.includes("${") || text.includes("%{");
