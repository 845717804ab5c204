/**
 * Every route's ACL rule, against the compiled agent with ACLs on: for each
 * row of the table, a request with a token whose policy grants exactly what
 * the rule needs gets past the check, and one whose policy grants everything
 * else is refused with Nomad's 403, changing nothing. (A route missing from
 * the table cannot be mounted at all: createApp refuses it.)
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { NAMESPACE_CAPABILITIES, SCOPES, type NamespaceCapability, type Scope } from "../../../src/acl/capabilities.ts";
import { ROUTE_RULES, type Rule } from "../../../src/api/acl/route-rules.ts";
import { testAgent } from "../../helpers/agent.ts";

interface Grants {
  management?: true;
  capabilities: NamespaceCapability[];
  scopes: Partial<Record<Scope, "read" | "write" | "deny">>;
  plugin?: "read" | "list" | "deny";
  /** Every variables capability on every path of the default namespace. */
  variables?: true;
}

/** Everything a client token can hold. */
const FULL: Grants = {
  capabilities: NAMESPACE_CAPABILITIES.filter((capability) => capability !== "deny"),
  scopes: Object.fromEntries(SCOPES.map((scope) => [scope, "write"])),
  plugin: "read",
};

const NO_QUERY = { query: () => undefined, queries: () => [] };

/** How long a request may take to answer; the check refuses before any route runs, so a refusal is never slower. */
const ANSWER_WAIT_MS = 2_000;

/** The rule as the check applies it to a request without query parameters or handshake. */
function effective(rule: Rule): Rule {
  if (rule.kind === "by-query") return effective(rule.pick(NO_QUERY));
  if (rule.kind === "handshake") return effective(rule.rule);
  return rule;
}

/** The least that passes `rule`. */
function grantFor(rule: Rule): Grants {
  switch (rule.kind) {
    case "management":
      return { management: true, capabilities: [], scopes: {} };
    case "namespace":
      return { capabilities: [rule.anyOf[0]!], scopes: {} };
    case "namespace-listed":
      return { capabilities: ["list-jobs"], scopes: {} };
    case "scope":
      return { capabilities: [], scopes: { [rule.scope]: rule.level } };
    case "plugin":
      return { capabilities: [], scopes: {}, plugin: rule.level };
    case "any":
      return grantFor(rule.of[0]!);
    case "all": {
      const parts = rule.of.map(grantFor);
      return { capabilities: parts.flatMap((part) => part.capabilities), scopes: Object.assign({}, ...parts.map((part) => part.scopes)), ...(parts.some((part) => part.management) ? { management: true } : {}) };
    }
    default:
      throw new Error(`no grant for a ${rule.kind} rule`);
  }
}

/** `from` less what `rule` needs: the most that still fails it. */
function lackFor(rule: Rule, from: Grants = FULL): Grants {
  switch (rule.kind) {
    case "management":
      return from;
    case "namespace":
      return { ...from, capabilities: from.capabilities.filter((capability) => !rule.anyOf.includes(capability)) };
    case "namespace-listed":
      return { ...from, capabilities: [] };
    case "scope":
      return { ...from, scopes: { ...from.scopes, [rule.scope]: rule.level === "write" ? "read" : "deny" } };
    case "plugin":
      return { ...from, plugin: rule.level === "read" ? "list" : "deny" };
    case "any":
      return rule.of.reduce((grants, inner) => lackFor(inner, grants), from);
    case "all":
      return lackFor(rule.of[0]!, from);
    default:
      throw new Error(`nothing to lack for a ${rule.kind} rule`);
  }
}

/** Grants as a policy in Nomad's JSON rule form. */
function policyRules(grants: Grants): string {
  const rules: Record<string, unknown> = {};
  if (grants.capabilities.length > 0 || grants.variables) {
    const variables = grants.variables ? { variables: { path: { "*": { capabilities: ["read", "write", "destroy", "list"] } } } } : {};
    rules.namespace = { default: { capabilities: grants.capabilities, ...variables } };
  }
  for (const [scope, policy] of Object.entries(grants.scopes)) rules[scope] = { policy };
  if (grants.plugin) rules.plugin = { policy: grants.plugin };
  return JSON.stringify(rules);
}

const agent = await testAgent("drover-acl-routes-", { acl: { enabled: true } });
let root = "";
/** A token the rows that change or delete a token act on (never the token making the request). */
let victim = "";
const tokens = new Map<string, { secret: string; accessor: string; policy: string }>();

async function api(method: string, path: string, token: string | undefined, body?: unknown): Promise<{ status: number; text: string }> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ANSWER_WAIT_MS);
  let res: Response;
  try {
    res = await agent.fetch(path, {
      method,
      headers: token ? { "X-Nomad-Token": token } : {},
      ...(body === undefined || method === "GET" ? {} : { body: JSON.stringify(body) }),
      signal: abort.signal,
    });
  } catch {
    // No answer yet (the monitor sends its headers with its first line): a refusal would have come at once.
    return { status: 0, text: "" };
  } finally {
    clearTimeout(timer);
  }
  // A streaming answer (monitor, event stream) is judged by its status; its body is cut.
  const text = res.headers.get("Content-Type")?.startsWith("text/plain") && res.status !== 200 ? await res.text() : "";
  abort.abort();
  await res.body?.cancel().catch(() => undefined);
  return { status: res.status, text };
}

/** A client token holding exactly `grants` (management: a management token). */
async function tokenFor(grants: Grants): Promise<{ secret: string; accessor: string; policy: string }> {
  const rules = grants.management ? "management" : policyRules(grants);
  const known = tokens.get(rules);
  if (known) return known;
  let policy = "";
  let body: Record<string, unknown> = { Type: "management" };
  if (!grants.management) {
    policy = `p-${createHash("sha256").update(rules).digest("hex").slice(0, 12)}`;
    expect((await api("PUT", `/v1/acl/policy/${policy}`, root, { Name: policy, Rules: rules })).status).toBe(200);
    body = { Type: "client", Policies: [policy] };
  }
  const res = await agent.fetch("/v1/acl/token", { method: "PUT", headers: { "X-Nomad-Token": root }, body: JSON.stringify(body) });
  const token = (await res.json()) as { SecretID: string; AccessorID: string };
  const made = { secret: token.SecretID, accessor: token.AccessorID, policy };
  tokens.set(rules, made);
  return made;
}

/** Each table row as requests: a path with its parameters filled in, once per method. */
function requests(token: { accessor: string; policy: string }): { method: string; path: string; rule: Rule; row: string }[] {
  return ROUTE_RULES.flatMap((entry) =>
    entry.methods.map((method) => ({
      method: method === "ALL" ? "GET" : method,
      rule: entry.rule,
      row: `${method} ${entry.path}`,
      path: entry.path
        .replace(":accessor", method === "GET" ? token.accessor : victim)
        .replace(/\/v1\/acl\/policy\/:name/, `/v1/acl/policy/${token.policy || "none"}`)
        // A namespace route is judged in the namespace it names; the grants are in "default".
        .replace("/v1/namespace/:name", "/v1/namespace/default")
        .replace(/:[a-z_]+/g, "00000000-0000-0000-0000-000000000000")
        .replace("*", "x"),
    })),
  );
}

/** What every table the API indexes reports: a refused request must move none of them. */
async function indexes(): Promise<string[]> {
  const paths = ["/v1/jobs", "/v1/allocations", "/v1/evaluations", "/v1/nodes", "/v1/acl/policies", "/v1/acl/tokens"];
  return Promise.all(paths.map(async (path) => (await agent.fetch(path, { headers: { "X-Nomad-Token": root } })).headers.get("X-Nomad-Index") ?? ""));
}

beforeAll(async () => {
  await agent.start();
  root = ((await (await agent.fetch("/v1/acl/bootstrap", { method: "PUT" })).json()) as { SecretID: string }).SecretID;
  const made = await agent.fetch("/v1/acl/token", { method: "PUT", headers: { "X-Nomad-Token": root }, body: JSON.stringify({ Type: "management" }) });
  victim = ((await made.json()) as { AccessorID: string }).AccessorID;
});

describe("every route's ACL rule", () => {
  test("a token without what the rule needs is refused, and the refusal changes nothing", async () => {
    const refusals: string[] = [];
    const lacking = ROUTE_RULES.filter((entry) => !["public", "caller", "variables"].includes(effective(entry.rule).kind));
    for (const entry of lacking) await tokenFor(lackFor(effective(entry.rule)));
    const before = await indexes();
    for (const entry of lacking) {
      const token = await tokenFor(lackFor(effective(entry.rule)));
      for (const request of requests(token).filter((candidate) => candidate.rule === entry.rule && candidate.row.endsWith(` ${entry.path}`))) {
        const answer = await api(request.method, request.path, token.secret, {});
        if (answer.status !== 403 || answer.text !== "Permission denied") refusals.push(`${request.row}: ${answer.status} ${answer.text}`);
      }
    }
    expect(refusals).toEqual([]);
    expect(await indexes()).toEqual(before);
  });

  test("a token with exactly what the rule needs gets past the check", async () => {
    const denied: string[] = [];
    for (const entry of ROUTE_RULES) {
      const rule = effective(entry.rule);
      const token =
        rule.kind === "public"
          ? undefined
          : rule.kind === "caller"
            ? await tokenFor({ capabilities: ["list-jobs"], scopes: {} })
            : rule.kind === "variables"
              ? await tokenFor({ capabilities: [], scopes: {}, variables: true })
              : await tokenFor(grantFor(rule));
      for (const request of requests(token ?? { accessor: "none", policy: "" }).filter((candidate) => candidate.row.endsWith(` ${entry.path}`) && candidate.rule === entry.rule)) {
        const answer = await api(request.method, request.path, token?.secret);
        if (answer.status === 403) denied.push(`${request.row}: ${answer.text}`);
      }
    }
    expect(denied).toEqual([]);
  });

  test("an unknown token is refused even where the rule asks for no capability", async () => {
    const unknown = "11111111-2222-3333-4444-555555555555";
    expect(await api("GET", "/v1/acl/token/self", unknown)).toEqual({ status: 403, text: "ACL token not found" });
    expect(await api("GET", "/v1/acl/policies", unknown)).toEqual({ status: 403, text: "ACL token not found" });
    // Health answers anyone: load balancers probe it without a token.
    expect((await api("GET", "/v1/agent/health", unknown)).status).toBe(200);
  });
});
