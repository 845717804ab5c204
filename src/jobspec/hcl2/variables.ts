/**
 * Input variables and locals, as Nomad's jobspec2 reads them.
 *
 *   variable "name" { type, default, description, sensitive, validation {...} }
 *   variables { name = default }            (the older form)
 *   values, later ones winning: default < NOMAD_VAR_name < -var-file (in order) < -var
 *   -var and NOMAD_VAR_ text: taken as is for string and number variables
 *   (and untyped ones), parsed as an HCL expression otherwise; converted to
 *   the variable's type
 *   every declared variable must end with a value; -var and var-file names
 *   must be declared (NOMAD_VAR_ names that are not are ignored)
 *   locals { a = ..., b = local.a }: evaluated once, on first use; a cycle
 *   is an error
 *
 * Problems are collected, each starting with the field path of where it is
 * (`variable["region"]: ...`, `locals.port: ...`) for locate.ts to place.
 */
import { evaluate, evaluateTemplate, LazyObject, type HclFunction, type Scope } from "./expressions.ts";
import { isTemplate, parseExpression, parseTemplate } from "./syntax.ts";
import { convert, parseTypeConstraint, takesLiteralText, type TypeConstraint } from "./types.ts";
import { HclEvalError, isObjectValue, typeName, type ObjectValue, type Value } from "./values.ts";

/** Where variable values come from, besides defaults. */
export interface VariableInputs {
  /** `-var` arguments, `name=value`, in command-line order. */
  args?: readonly string[];
  /** Parsed `-var-file` documents (and the API's `Variables`), in order: name for messages, attributes. */
  files?: readonly { name: string; document: Record<string, unknown> }[];
  /** The environment NOMAD_VAR_<name> values are read from. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Names the job does not declare are skipped instead of refused (Nomad's parse endpoint, which is not strict). */
  ignoreUndeclared?: boolean;
}

/** The prefix of environment variables that set job variables (Nomad's VarEnvPrefix). */
export const VAR_ENV_PREFIX = "NOMAD_VAR_";

const VARIABLE_ATTRIBUTES = new Set(["type", "default", "description", "sensitive", "validation"]);
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;

interface Validation {
  condition: unknown;
  errorMessage: unknown;
  path: string;
}

interface Variable {
  name: string;
  path: string;
  type?: TypeConstraint;
  value?: Value;
  /** Where the value came from, for validation messages. */
  from?: string;
  validations: Validation[];
}

type Json = Record<string, unknown>;
const isJson = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);
const asBlocks = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isJson) : isJson(value) ? [value] : []);

/** A value of the parsed document (strings are template text) evaluated in `scope`. */
export function evaluateDocumentValue(raw: unknown, scope: Scope): Value {
  if (typeof raw === "string") return isTemplate(raw) ? evaluateTemplate(parseTemplate(raw, "raw").parts, scope) : raw;
  if (Array.isArray(raw)) return raw.map((item) => evaluateDocumentValue(item, scope));
  if (isJson(raw)) {
    const out: ObjectValue = {};
    for (const [key, item] of Object.entries(raw)) out[key] = evaluateDocumentValue(item, scope);
    return out;
  }
  return raw as Value;
}

/** The text of an attribute that holds an expression (`type = list(string)` arrives as "${list(string)}"). */
function expressionText(raw: unknown): string | undefined {
  if (typeof raw !== "string") return undefined;
  const match = /^\$\{([\s\S]*)\}$/.exec(raw.trim());
  return match?.[1];
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Nomad's rule for a validation's error_message: whole sentences, so it reads well inside the larger message. */
function looksLikeSentences(text: string): boolean {
  const first = [...text][0];
  if (first === undefined) return false;
  if (/\p{L}/u.test(first) && first !== first.toUpperCase()) return false;
  return /[.?!]$/.test(text);
}

export class JobVariables {
  readonly problems: string[] = [];
  private readonly variables = new Map<string, Variable>();
  private readonly localExprs = new Map<string, { raw: unknown; path: string }>();
  private readonly localValues = new Map<string, Value>();
  private readonly evaluating: string[] = [];

  /** Defaults, var files, -var values and validations see functions but no variables (as in Nomad). */
  private readonly emptyScope: Scope;

  constructor(functions: Readonly<Record<string, HclFunction>>) {
    this.emptyScope = { names: new Map(), functions, keepUnknown: false };
  }

  /** Reads the `variable`, `variables` and `locals` blocks of the document. */
  declare(document: Json): void {
    const declared = document.variable;
    if (isJson(declared)) {
      for (const [name, blocks] of Object.entries(declared)) {
        const list = asBlocks(blocks);
        if (list.length > 1) this.problems.push(`variable[${JSON.stringify(name)}]: the variable is declared ${list.length} times`);
        if (list[0]) this.declareBlock(name, list[0]);
      }
    }
    for (const block of asBlocks(document.variables)) {
      for (const [name, raw] of Object.entries(block)) this.declareDefault(name, raw, `variables.${name}`);
    }
    for (const block of asBlocks(document.locals)) {
      for (const [name, raw] of Object.entries(block)) {
        if (this.localExprs.has(name)) this.problems.push(`locals.${name}: the local "${name}" is defined more than once`);
        else this.localExprs.set(name, { raw, path: `locals.${name}` });
      }
    }
  }

  private declareDefault(name: string, raw: unknown, path: string): void {
    if (this.variables.has(name)) {
      this.problems.push(`${path}: the variable "${name}" is declared more than once`);
      return;
    }
    const variable: Variable = { name, path, validations: [] };
    try {
      variable.value = evaluateDocumentValue(raw, this.emptyScope);
      variable.from = "default";
      variable.type = inferredType(variable.value);
    } catch (err) {
      this.problems.push(`${path}: ${message(err)}`);
    }
    this.variables.set(name, variable);
  }

  private declareBlock(name: string, block: Json): void {
    const path = `variable[${JSON.stringify(name)}]`;
    if (!IDENTIFIER.test(name)) {
      this.problems.push(`${path}: a variable name must start with a letter or underscore and hold only letters, digits, underscores and dashes`);
    }
    for (const key of Object.keys(block)) {
      if (!VARIABLE_ATTRIBUTES.has(key)) this.problems.push(`${path}.${key}: unknown attribute`);
    }
    const variable: Variable = { name, path, validations: [] };
    if (block.type !== undefined) {
      const text = expressionText(block.type);
      try {
        if (text === undefined) throw new HclEvalError("expected a type such as string, number, bool, list(string) or object({...})");
        variable.type = parseTypeConstraint(text);
      } catch (err) {
        this.problems.push(`${path}.type: ${message(err)}`);
      }
    }
    if (block.default !== undefined) {
      try {
        const value = evaluateDocumentValue(block.default, this.emptyScope);
        variable.value = variable.type ? convert(value, variable.type) : value;
        variable.from = "default";
        variable.type ??= inferredType(value);
      } catch (err) {
        this.problems.push(`${path}.default: the default does not fit the variable's type: ${message(err)}`);
      }
    }
    asBlocks(block.validation).forEach((validation, i, all) => {
      const at = `${path}.validation${all.length > 1 ? `[${i}]` : ""}`;
      for (const key of ["condition", "error_message"]) {
        if (validation[key] === undefined) this.problems.push(`${at}.${key}: is required`);
      }
      variable.validations.push({ condition: validation.condition, errorMessage: validation.error_message, path: at });
    });
    if (this.variables.has(name)) this.problems.push(`${path}: the variable "${name}" is declared more than once`);
    this.variables.set(name, variable);
  }

  /** Applies values from the environment, var files and -var arguments, in that order of precedence. */
  assign({ args = [], files = [], env = {}, ignoreUndeclared = false }: VariableInputs): void {
    for (const [key, text] of Object.entries(env)) {
      if (!key.startsWith(VAR_ENV_PREFIX) || text === undefined) continue;
      const variable = this.variables.get(key.slice(VAR_ENV_PREFIX.length));
      if (variable) this.setFromText(variable, text, key);
    }
    for (const { name: file, document } of files) {
      if (document.variable !== undefined) {
        this.problems.push(`${file}: a var file sets values of variables the job file declares; it cannot declare them ("variable" blocks)`);
        continue;
      }
      for (const [name, raw] of Object.entries(document)) {
        const variable = this.variables.get(name);
        if (!variable) {
          if (!ignoreUndeclared) this.problems.push(`${file}: ${name}: no variable "${name}" is declared in the job file`);
          continue;
        }
        try {
          this.set(variable, evaluateDocumentValue(raw, this.emptyScope), file);
        } catch (err) {
          this.failed(variable, `${file}: ${name}`, err);
        }
      }
    }
    for (const arg of args) {
      const eq = arg.indexOf("=");
      if (eq <= 0) {
        this.problems.push(`-var ${JSON.stringify(arg)}: expected name=value`);
        continue;
      }
      const name = arg.slice(0, eq);
      const variable = this.variables.get(name);
      if (!variable) {
        if (!ignoreUndeclared) this.problems.push(`-var ${JSON.stringify(name)}: no variable "${name}" is declared in the job file`);
        continue;
      }
      this.setFromText(variable, arg.slice(eq + 1), `-var ${name}`);
    }
  }

  private setFromText(variable: Variable, text: string, from: string): void {
    try {
      const value = takesLiteralText(variable.type) ? text : evaluate(parseExpression(text), this.emptyScope);
      this.set(variable, value, from);
    } catch (err) {
      this.failed(variable, from, err);
    }
  }

  /** A value given for `variable` that does not fit it: reported at its declaration, and not again as unset. */
  private failed(variable: Variable, from: string, err: unknown): void {
    this.problems.push(`${variable.path}: the value from ${from}: ${message(err)}`);
    variable.from ??= "a value that does not fit";
  }

  private set(variable: Variable, value: Value, from: string): void {
    try {
      variable.value = variable.type ? convert(value, variable.type) : value;
      variable.from = from;
    } catch (err) {
      throw new HclEvalError(`does not fit the variable's type: ${message(err)}`);
    }
  }

  /** `var`: every variable's value, after checking that each has one and passes its validations. */
  values(): LazyObject {
    const values = this.checkedValues();
    return new LazyObject("variable", Object.keys(values), (name) => values[name]!);
  }

  private checkedValues(): ObjectValue {
    const out: ObjectValue = {};
    for (const variable of this.variables.values()) {
      if (variable.value === undefined) {
        if (variable.from === undefined) {
          this.problems.push(
            `${variable.path}: unset variable "${variable.name}": give it a value with -var ${variable.name}=..., a var file, or ${VAR_ENV_PREFIX}${variable.name}, or a default`,
          );
        }
        continue;
      }
      this.validate(variable, variable.value);
      out[variable.name] = variable.value;
    }
    return out;
  }

  private validate(variable: Variable, value: Value): void {
    const scope: Scope = { ...this.emptyScope, names: new Map([["var", { [variable.name]: value }]]) };
    for (const validation of variable.validations) {
      try {
        const text = typeof validation.errorMessage === "string" ? String(evaluateDocumentValue(validation.errorMessage, this.emptyScope)) : "";
        if (!looksLikeSentences(text)) {
          this.problems.push(
            `${validation.path}.error_message: must be at least one full sentence, starting with an uppercase letter and ending with a period or question mark`,
          );
          continue;
        }
        const result = evaluateDocumentValue(validation.condition, scope);
        if (typeof result !== "boolean") throw new HclEvalError(`the condition must be true or false, got ${result === null ? "null" : `a ${typeName(result)}`}`);
        if (!result) this.problems.push(`${variable.path}: invalid value for variable "${variable.name}" (from ${variable.from}): ${text}`);
      } catch (err) {
        this.problems.push(`${validation.path}.condition: ${message(err)}`);
      }
    }
  }

  /** `local`: each local evaluated when first read, in a scope with `var` and `local`. */
  locals(scopeFor: (locals: LazyObject) => Scope): LazyObject {
    const names = [...this.localExprs.keys()];
    const lazy: LazyObject = new LazyObject("local", names, (name) => this.local(name, scopeFor(lazy)));
    return lazy;
  }

  private local(name: string, scope: Scope): Value {
    const known = this.localValues.get(name);
    if (known !== undefined) return known;
    const entry = this.localExprs.get(name);
    if (!entry) throw new HclEvalError(`there is no local named "${name}"`);
    if (this.evaluating.includes(name)) {
      const cycle = [...this.evaluating.slice(this.evaluating.indexOf(name)), name].map((local) => `local.${local}`).join(" -> ");
      throw new HclEvalError(`locals refer to each other in a cycle: ${cycle}`);
    }
    this.evaluating.push(name);
    try {
      const value = evaluateDocumentValue(entry.raw, scope);
      this.localValues.set(name, value);
      return value;
    } finally {
      this.evaluating.pop();
    }
  }

  /** Evaluates every local (unused ones too, as Nomad does), each problem at its own path. */
  checkLocals(locals: LazyObject): void {
    for (const name of locals.names) {
      try {
        locals.read(name);
      } catch (err) {
        this.problems.push(`${this.localExprs.get(name)!.path}: ${message(err)}`);
      }
    }
  }
}

/** The type a default gives a variable declared without one (so -var text is read as that type). */
function inferredType(value: Value): TypeConstraint | undefined {
  if (typeof value === "string") return { kind: "string" };
  if (typeof value === "number") return { kind: "number" };
  if (typeof value === "boolean") return { kind: "bool" };
  if (Array.isArray(value)) return { kind: "list", element: { kind: "any" } };
  if (isObjectValue(value)) return { kind: "map", element: { kind: "any" } };
  return undefined;
}
