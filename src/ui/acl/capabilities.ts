/**
 * What the token may do, worked out the way Nomad's ACLs decide it, so a
 * page can show it and leave out what would be refused:
 *
 *   no token: GET /v1/agent/self ─── ACL.Enabled false ─> everything (asked first: without ACLs
 *                                  │                     it answers 200, the token endpoint a 400)
 *                                  └─ true, or 403 ─> GET /v1/acl/token/self
 *   GET /v1/acl/token/self ─┬─ 400 "ACL support disabled" ─> everything
 *                           ├─ a management token ─────────> everything
 *                           ├─ a client token ─> each of its policies (GET /v1/acl/policy/:name)
 *                           │                    ─> the `default` namespace's capabilities, node and agent rules
 *                           │                       (a page about another namespace asks accessIn for that one's)
 *                           └─ no token ─> the anonymous policy, if the agent shows it
 *
 * A policy the UI cannot read (no RulesJSON, or refused) leaves its
 * capabilities unknown: the page then offers the action and shows the
 * agent's 403 in place if it comes.
 */
import { ApiError, getJson } from "../api/client.ts";
import { AclPolicySchema, AclTokenSchema, AgentSelfSchema, type AclPolicy, type AclToken } from "../api/shapes.ts";

/** The capabilities pages ask about: namespace ones by Nomad's names, node and agent as rule:level. */
export type Capability =
  | "list-jobs"
  | "read-job"
  | "submit-job"
  | "read-logs"
  | "read-fs"
  | "alloc-exec"
  | "alloc-lifecycle"
  | "node:read"
  | "node:write"
  | "agent:read"
  | "agent:write";

export const CAPABILITY_LABELS: Record<Capability, string> = {
  "list-jobs": "list jobs",
  "read-job": "read jobs and allocations",
  "submit-job": "run and stop jobs",
  "read-logs": "read task logs",
  "read-fs": "read alloc files",
  "alloc-exec": "exec into tasks",
  "alloc-lifecycle": "restart, signal and stop allocations",
  "node:read": "read the node",
  "node:write": "change the node (drain, eligibility)",
  "agent:read": "read the agent",
  "agent:write": "change the agent",
};

type AccessMode = "loading" | "acl-disabled" | "management" | "client" | "anonymous" | "unknown-token";

export interface Access {
  mode: AccessMode;
  token: AclToken | undefined;
  /** true: allowed; false: refused; undefined: the UI cannot tell. */
  granted: Partial<Record<Capability, boolean>>;
  /** Why some capabilities are unknown, when they are. */
  note: string | undefined;
  /** What the grants were worked out from, to work them out again for another namespace. */
  policies?: { read: AclPolicy[]; unreadable: string[] };
}

export function can(access: Access, capability: Capability): boolean | undefined {
  if (access.mode === "acl-disabled" || access.mode === "management") return true;
  return access.granted[capability];
}

/** Nomad's expansion of a namespace `policy` into capabilities (acl/policy.go). */
const NAMESPACE_POLICY: Record<string, string[]> = {
  read: ["list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume", "read-job-scaling", "list-scaling-policies", "read-scaling-policy"],
  write: [
    "list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume", "read-job-scaling", "list-scaling-policies", "read-scaling-policy",
    "scale-job", "submit-job", "dispatch-job", "read-logs", "read-fs", "alloc-exec", "alloc-lifecycle", "csi-mount-volume", "csi-write-volume", "submit-recommendation",
  ],
  scale: ["list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job"],
  deny: ["deny"],
};

const LEVELS = ["deny", "read", "write"];

function globMatches(pattern: string, name: string): boolean {
  const regex = new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  return regex.test(name);
}

/** The capabilities `policies` give in `name` (`default` unless told), and their node and agent levels; undefined where none is known. */
export function grantsOf(policies: AclPolicy[], name = "default"): Partial<Record<Capability, boolean>> {
  const namespace = new Set<string>();
  let node: string | undefined;
  let agent: string | undefined;
  for (const policy of policies) {
    const rules = policy.RulesJSON;
    if (!rules) continue;
    // Nomad picks the exact namespace rule over a glob; here one namespace matters.
    const exact = rules.Namespaces.filter((ns) => ns.Name === name);
    const matching = exact.length > 0 ? exact : rules.Namespaces.filter((ns) => globMatches(ns.Name, name));
    for (const ns of matching) {
      for (const capability of [...ns.Capabilities, ...(NAMESPACE_POLICY[ns.Policy ?? ""] ?? [])]) namespace.add(capability);
    }
    node = strongest(node, rules.Node?.Policy);
    agent = strongest(agent, rules.Agent?.Policy);
  }
  const denied = namespace.has("deny");
  const grants: Partial<Record<Capability, boolean>> = {};
  for (const capability of ["list-jobs", "read-job", "submit-job", "read-logs", "read-fs", "alloc-exec", "alloc-lifecycle"] as const) {
    grants[capability] = !denied && namespace.has(capability);
  }
  grants["node:read"] = node === "read" || node === "write";
  grants["node:write"] = node === "write";
  grants["agent:read"] = agent === "read" || agent === "write";
  grants["agent:write"] = agent === "write";
  return grants;
}

/** Nomad: a deny anywhere wins; otherwise the highest level granted. */
function strongest(current: string | undefined, next: string | undefined | null): string | undefined {
  if (!next) return current;
  if (current === "deny" || next === "deny") return "deny";
  return current === undefined || LEVELS.indexOf(next) > LEVELS.indexOf(current) ? next : current;
}

/** `access` judged in `namespace`: a page about a job or an alloc of another namespace than `default` asks this. */
export function accessIn(access: Access, namespace: string): Access {
  if (!access.policies || namespace === "" || namespace === "default") return access;
  return { ...access, granted: partial(grantsOf(access.policies.read, namespace), access.policies.unreadable) };
}

const loading: Access = { mode: "loading", token: undefined, granted: {}, note: undefined };
export const LOADING_ACCESS = loading;

/** The access is known only once every policy is read: read side by side, one round trip rather than one a policy. */
async function readPolicies(names: string[]): Promise<{ policies: AclPolicy[]; unreadable: string[] }> {
  const read = await Promise.all(
    names.map((name) =>
      getJson(`/v1/acl/policy/${encodeURIComponent(name)}`, AclPolicySchema).then(
        (policy) => (policy.RulesJSON ? policy : undefined),
        () => undefined,
      ),
    ),
  );
  const policies = read.filter((policy): policy is AclPolicy => policy !== undefined);
  const unreadable = names.filter((_, i) => read[i] === undefined);
  return { policies, unreadable };
}

function partial(grants: Partial<Record<Capability, boolean>>, unreadable: string[]): Partial<Record<Capability, boolean>> {
  if (unreadable.length === 0) return grants;
  // What an unreadable policy adds is unknown: keep only what is surely granted.
  return Object.fromEntries(Object.entries(grants).filter(([, allowed]) => allowed)) as Partial<Record<Capability, boolean>>;
}

/** Whether the agent says its ACLs are off; undefined when it will not say (ACLs on, no agent:read). */
async function aclsOff(): Promise<boolean | undefined> {
  try {
    return !(await getJson("/v1/agent/self", AgentSelfSchema)).config.ACL?.Enabled;
  } catch (err) {
    if (err instanceof ApiError && err.denied) return undefined;
    throw err;
  }
}

export async function loadAccess(hasToken: boolean): Promise<Access> {
  // Without a token, the agent's config tells whether ACLs are on (a 200 either way when they are off).
  if (!hasToken && (await aclsOff())) return { ...loading, mode: "acl-disabled" };
  let token: AclToken;
  try {
    token = await getJson("/v1/acl/token/self", AclTokenSchema);
  } catch (err) {
    if (err instanceof ApiError && err.status === 400 && /ACL support disabled/i.test(err.message)) return { ...loading, mode: "acl-disabled" };
    if (hasToken && err instanceof ApiError && (err.status === 403 || err.status === 404)) {
      return { ...loading, mode: "unknown-token", note: "The agent does not know this token: requests are made as the anonymous token." };
    }
    if (!hasToken) {
      const { policies, unreadable } = await readPolicies(["anonymous"]);
      return {
        mode: "anonymous",
        token: undefined,
        granted: partial(grantsOf(policies), unreadable),
        note: unreadable.length > 0 ? "No token: what the anonymous policy allows is not shown to the UI." : undefined,
        policies: { read: policies, unreadable },
      };
    }
    throw err;
  }
  if (token.Type === "management") return { mode: "management", token, granted: {}, note: undefined };
  const { policies, unreadable } = await readPolicies(token.Policies);
  return {
    mode: "client",
    token,
    granted: partial(grantsOf(policies), unreadable),
    policies: { read: policies, unreadable },
    note: unreadable.length > 0 ? `Policies the UI cannot read: ${unreadable.join(", ")}; actions they may allow are offered and refused by the agent if not.` : undefined,
  };
}

