/**
 * ACL policy rules: Nomad's rule language, written in HCL or JSON, read into
 * Nomad's RulesJSON shape with every namespace `policy` expanded into its
 * capabilities (what Nomad returns as a policy's RulesJSON, and what an ACL
 * is compiled from, so a stored policy never needs the HCL parser again).
 *
 *   namespace "default" { policy = "read"  capabilities = ["submit-job"] }
 *   namespace "ci-*"    { policy = "write" }
 *   namespace "default" { variables { path "app/*" { capabilities = ["read"] } } }
 *   host_volume "data"  { policy = "read" }
 *   agent { policy = "read" }   node { policy = "write" }   operator { policy = "deny" }
 *   quota { policy = "read" }   plugin { policy = "list" }
 *
 * Empty text is a policy that grants nothing (Nomad stores it as written).
 * A problem is reported by rule and key (`namespace "default": policy:
 * expected one of ...`); an unknown key is a problem, never ignored.
 */
import * as v from "valibot";
import { formatIssues, ValidationError } from "../lib/validation.ts";
import {
  expandHostVolumePolicy,
  expandNamespacePolicy,
  expandVariableCapabilities,
  HOST_VOLUME_CAPABILITIES,
  NAMESPACE_CAPABILITIES,
  NAMESPACE_POLICIES,
  PLUGIN_POLICIES,
  SCOPE_POLICIES,
  SCOPES,
  VARIABLE_CAPABILITIES,
  type NamespacePolicy,
  type Scope,
} from "./capabilities.ts";

/** Nomad's rule for namespace and host volume names in a policy: `*` globs allowed. */
const RULE_NAME = /^[a-zA-Z0-9*-]{1,128}$/;

const oneOf = <const T extends readonly string[]>(values: T) => v.picklist(values, `expected one of ${values.map((value) => `"${value}"`).join(", ")}`);

const NamespaceBlockSchema = v.strictObject({
  policy: v.optional(oneOf(NAMESPACE_POLICIES)),
  capabilities: v.optional(v.array(oneOf(NAMESPACE_CAPABILITIES)), []),
  /** Read by variablesRules, which names its problems by path. */
  variables: v.optional(v.unknown()),
});

const VariablesBlockSchema = v.strictObject({ path: v.optional(v.unknown()) });
const VariablePathBlockSchema = v.strictObject({ capabilities: v.optional(v.array(oneOf(VARIABLE_CAPABILITIES)), []) });

/** A namespace's variables rules in RulesJSON: each path (a `*` glob allowed) with its expanded capabilities. */
const VariablesRulesSchema = v.object({
  Paths: v.array(v.object({ PathSpec: v.string(), Capabilities: v.array(v.picklist(VARIABLE_CAPABILITIES)) })),
});
export type VariablesRules = v.InferOutput<typeof VariablesRulesSchema>;

const HostVolumeBlockSchema = v.strictObject({
  policy: v.optional(oneOf(NAMESPACE_POLICIES)),
  capabilities: v.optional(v.array(oneOf(HOST_VOLUME_CAPABILITIES)), []),
});

const ScopeBlockSchema = v.strictObject({ policy: oneOf(SCOPE_POLICIES) });
const PluginBlockSchema = v.strictObject({ policy: oneOf(PLUGIN_POLICIES) });

/** One policy's rules in Nomad's RulesJSON shape (Go field names). */
export const PolicyRulesSchema = v.object({
  Namespaces: v.nullable(
    v.array(
      v.object({
        Name: v.string(),
        Policy: v.string(),
        Capabilities: v.array(v.picklist(NAMESPACE_CAPABILITIES)),
        // Absent from policies stored before variables existed.
        Variables: v.optional(v.nullable(VariablesRulesSchema), null),
      }),
    ),
  ),
  HostVolumes: v.nullable(v.array(v.object({ Name: v.string(), Policy: v.string(), Capabilities: v.array(v.picklist(HOST_VOLUME_CAPABILITIES)) }))),
  Agent: v.nullable(v.object({ Policy: v.picklist(SCOPE_POLICIES) })),
  Node: v.nullable(v.object({ Policy: v.picklist(SCOPE_POLICIES) })),
  Operator: v.nullable(v.object({ Policy: v.picklist(SCOPE_POLICIES) })),
  Quota: v.nullable(v.object({ Policy: v.picklist(SCOPE_POLICIES) })),
  Plugin: v.nullable(v.object({ Policy: v.picklist(PLUGIN_POLICIES) })),
});
export type PolicyRules = v.InferOutput<typeof PolicyRulesSchema>;

const NO_RULES: PolicyRules = { Namespaces: null, HostVolumes: null, Agent: null, Node: null, Operator: null, Quota: null, Plugin: null };

const SCOPE_FIELDS: Record<Scope, "Agent" | "Node" | "Operator" | "Quota"> = { agent: "Agent", node: "Node", operator: "Operator", quota: "Quota" };
const TOP_LEVEL = new Set(["namespace", "host_volume", "plugin", ...SCOPES]);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A block written once (an object, JSON's way) or more (a list, HCL's way): always a list. */
const blocks = (value: unknown): unknown[] => (Array.isArray(value) ? value : [value]);

/**
 * Reads a policy's rules (`source` names them in errors). HCL goes through
 * the HCL parser, loaded on first use; text starting with `{` is JSON.
 * Throws ValidationError listing every problem.
 */
export async function parsePolicyRules(source: string, text: string): Promise<PolicyRules> {
  if (text === "") return { ...NO_RULES };
  const trimmed = text.trim();
  if (trimmed === "") throw new ValidationError(source, ["no rules: a policy needs at least one namespace, host_volume, agent, node, operator, quota or plugin rule"]);
  let document: unknown;
  if (trimmed.startsWith("{")) {
    try {
      document = JSON.parse(trimmed);
    } catch (err) {
      throw new ValidationError(source, [`malformed JSON: ${(err as Error).message}`]);
    }
  } else {
    const { parseHcl } = await import("../lib/hcl.ts");
    document = await parseHcl(source, text);
  }
  return rulesFromDocument(source, document);
}

/** The rules of a parsed document (HCL as hcl2json gives it, or Nomad's JSON form). */
export function rulesFromDocument(source: string, document: unknown): PolicyRules {
  if (!isObject(document)) throw new ValidationError(source, ["expected an object of rules"]);
  const problems: string[] = [];
  const check: Check = (schema, value, where) => {
    const result = v.safeParse(schema, value);
    if (result.success) return result.output;
    for (const line of formatIssues(result.issues)) problems.push(`${where}: ${line}`);
    return undefined;
  };
  const rules: PolicyRules = { ...NO_RULES };

  for (const key of Object.keys(document)) if (!TOP_LEVEL.has(key)) problems.push(`unknown rule "${key}"`);

  rules.Namespaces =
    labelledRules(document.namespace, "namespace", NamespaceBlockSchema, expandNamespacePolicy, check, problems)?.map(({ extra, ...rule }) => ({
      ...rule,
      Variables: extra.variables === undefined ? null : variablesRules(rule.Name, extra.variables, check, problems),
    })) ?? null;
  rules.HostVolumes = labelledRules(document.host_volume, "host_volume", HostVolumeBlockSchema, expandHostVolumePolicy, check, problems)?.map(({ extra: _extra, ...rule }) => rule) ?? null;
  for (const scope of SCOPES) {
    if (document[scope] === undefined) continue;
    // Written twice, the later block is the one that counts (as in Nomad's HCL decoding).
    for (const block of blocks(document[scope])) {
      const parsed = check(ScopeBlockSchema, block, scope);
      if (parsed) rules[SCOPE_FIELDS[scope]] = { Policy: parsed.policy };
    }
  }
  if (document.plugin !== undefined) {
    for (const block of blocks(document.plugin)) {
      const parsed = check(PluginBlockSchema, block, "plugin");
      if (parsed) rules.Plugin = { Policy: parsed.policy };
    }
  }
  if (problems.length === 0 && Object.values(rules).every((rule) => rule === null)) {
    problems.push("no rules: a policy needs at least one namespace, host_volume, agent, node, operator, quota or plugin rule");
  }
  if (problems.length > 0) throw new ValidationError(source, problems);
  return rules;
}

type Check = <S extends v.GenericSchema>(schema: S, value: unknown, where: string) => v.InferOutput<S> | undefined;

/**
 * The rules of a labelled block kind (`namespace "x" {}`, `host_volume "x" {}`),
 * each with its `policy` expanded into capabilities after the ones it
 * names; null when there are none.
 */
function labelledRules<C extends string, B extends { policy?: NamespacePolicy | undefined; capabilities: C[] }>(
  value: unknown,
  what: string,
  schema: v.GenericSchema<unknown, B>,
  expand: (policy: NamespacePolicy) => readonly C[],
  check: Check,
  problems: string[],
): { Name: string; Policy: string; Capabilities: C[]; extra: B }[] | null {
  let rules: { Name: string; Policy: string; Capabilities: C[]; extra: B }[] | null = null;
  for (const [name, entry] of labelled(value, what, problems)) {
    if (!RULE_NAME.test(name)) problems.push(`${what} "${name}": invalid name (letters, digits, "-" and "*", at most 128)`);
    for (const block of blocks(entry)) {
      const parsed = check(schema, block, `${what} "${name}"`);
      if (!parsed) continue;
      (rules ??= []).push({ Name: name, Policy: parsed.policy ?? "", Capabilities: [...parsed.capabilities, ...(parsed.policy ? expand(parsed.policy) : [])], extra: parsed });
    }
  }
  return rules;
}

/** A namespace's `variables { path "..." { capabilities = [...] } }`, as Nomad checks it: at least one path, each with valid capabilities. */
function variablesRules(namespace: string, value: unknown, check: Check, problems: string[]): VariablesRules | null {
  const where = `namespace "${namespace}": variables`;
  const paths: VariablesRules["Paths"] = [];
  let written = 0;
  for (const block of blocks(value)) {
    const parsed = check(VariablesBlockSchema, block, where);
    if (!parsed) continue;
    for (const [pathSpec, entry] of labelled(parsed.path, `${where}: path`, problems)) {
      written++;
      for (const pathBlock of blocks(entry)) {
        const rule = check(VariablePathBlockSchema, pathBlock, `${where}: path "${pathSpec}"`);
        if (rule) paths.push({ PathSpec: pathSpec, Capabilities: expandVariableCapabilities(rule.capabilities) });
      }
    }
  }
  if (written === 0) {
    problems.push(`${where}: no variable paths (write path "<path>" { capabilities = [...] })`);
    return null;
  }
  return paths.length > 0 ? { Paths: paths } : null;
}

/** A labelled block's entries (`namespace "x" {}`): label -> block(s). */
function labelled(value: unknown, what: string, problems: string[]): [string, unknown][] {
  if (value === undefined) return [];
  // JSON may write labelled blocks as a list of {label: block} objects, as HCL1 accepts.
  const maps = Array.isArray(value) ? value : [value];
  const entries: [string, unknown][] = [];
  for (const map of maps) {
    if (!isObject(map)) {
      problems.push(`${what}: expected blocks labelled with a name, as in ${what} "default" { ... }`);
      continue;
    }
    entries.push(...Object.entries(map));
  }
  return entries;
}
