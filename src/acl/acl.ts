/**
 * The ACL a request is judged by: a token's policies compiled into capability
 * sets, merged as Nomad merges them.
 *
 *   namespaces: the union of every rule's capabilities for a name, except that
 *               `deny` in any of them clears the set to deny alone
 *   agent, node, operator, quota, plugin: the highest level any policy
 *               grants, except that `deny` in any of them wins
 *   a name with `*` is a glob; a request's namespace uses the exact rule if
 *   there is one, else the matching glob closest to it in length
 *
 *   variables:  per namespace and path (`ns\0path`, either side a glob):
 *               an exact path first, then a workload's implicit read and
 *               list of its own job's paths, then the closest glob, as
 *               Nomad 1.x matches them; `deny` in any rule for a path wins
 *
 * A management token's ACL allows everything.
 */
import { maxLevel, type HostVolumeCapability, type Level, type NamespaceCapability, type Scope, type VariableCapability } from "./capabilities.ts";
import type { PolicyRules } from "./policy.ts";

type CapabilitySet = Set<string>;

interface Glob {
  pattern: string;
  regexp: RegExp;
  capabilities: CapabilitySet;
}

/** Nomad's glob: `*` matches any run of characters, nothing else is special. */
function globRegExp(pattern: string): RegExp {
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`^${escaped.join(".*")}$`, "s");
}

class NameRules {
  private readonly exact = new Map<string, CapabilitySet>();
  private readonly globs: Glob[] = [];

  add(name: string, capabilities: readonly string[]): void {
    let set: CapabilitySet;
    if (name.includes("*")) {
      let glob = this.globs.find((candidate) => candidate.pattern === name);
      if (!glob) {
        glob = { pattern: name, regexp: globRegExp(name), capabilities: new Set() };
        this.globs.push(glob);
        // In pattern order, as Nomad's radix tree walks them, so ties go to the same rule.
        this.globs.sort((a, b) => (a.pattern < b.pattern ? -1 : 1));
      }
      set = glob.capabilities;
    } else {
      set = this.exact.get(name) ?? new Set();
      this.exact.set(name, set);
    }
    if (set.has("deny")) return;
    if (capabilities.includes("deny")) {
      set.clear();
      set.add("deny");
      return;
    }
    for (const capability of capabilities) set.add(capability);
  }

  /** The capability set that governs `name`, or undefined when no rule matches it. */
  lookup(name: string): CapabilitySet | undefined {
    return this.exact.get(name) ?? this.closestGlob(name);
  }

  lookupExact(name: string): CapabilitySet | undefined {
    return this.exact.get(name);
  }

  /** The matching glob closest to `name` in length (Nomad's findClosestMatchingGlob). */
  closestGlob(name: string): CapabilitySet | undefined {
    let best: { difference: number; set: CapabilitySet } | undefined;
    for (const glob of this.globs) {
      if (!glob.regexp.test(name)) continue;
      const difference = name.length - glob.pattern.length + (glob.pattern.match(/\*/g)?.length ?? 0);
      if (!best || difference < best.difference) best = { difference, set: glob.capabilities };
    }
    return best?.set;
  }
}

/** Who a workload identity is: what its implicit variable access follows from (Nomad's ACLClaim). */
export interface WorkloadClaim {
  namespace: string;
  job: string;
  group: string;
  task: string;
}

/** What a workload may do with its own job's variables without any policy. */
const WORKLOAD_VARIABLE_CAPABILITIES: CapabilitySet = new Set(["read", "list"]);

const variableKey = (namespace: string, path: string) => `${namespace}\0${path}`;

export class Acl {
  /** What a management token holds. */
  static readonly management = new Acl(true, []);

  private readonly namespaces = new NameRules();
  private readonly hostVolumes = new NameRules();
  private readonly variables = new NameRules();
  private readonly scopes: Record<Scope, Level> = { agent: "", node: "", operator: "", quota: "" };
  private plugin: Level = "";

  constructor(
    readonly isManagement: boolean,
    policies: readonly PolicyRules[],
  ) {
    for (const policy of policies) {
      for (const rule of policy.Namespaces ?? []) {
        this.namespaces.add(rule.Name, rule.Capabilities);
        for (const path of rule.Variables?.Paths ?? []) this.variables.add(variableKey(rule.Name, path.PathSpec), path.Capabilities);
      }
      for (const rule of policy.HostVolumes ?? []) this.hostVolumes.add(rule.Name, rule.Capabilities);
      if (policy.Agent) this.scopes.agent = maxLevel(this.scopes.agent, policy.Agent.Policy);
      if (policy.Node) this.scopes.node = maxLevel(this.scopes.node, policy.Node.Policy);
      if (policy.Operator) this.scopes.operator = maxLevel(this.scopes.operator, policy.Operator.Policy);
      if (policy.Quota) this.scopes.quota = maxLevel(this.scopes.quota, policy.Quota.Policy);
      if (policy.Plugin) this.plugin = maxLevel(this.plugin, policy.Plugin.Policy);
    }
  }

  /** Whether `capability` is granted in namespace `namespace`. */
  allowNamespaceOperation(namespace: string, capability: NamespaceCapability): boolean {
    if (this.isManagement) return true;
    return this.namespaces.lookup(namespace)?.has(capability) ?? false;
  }

  /** Whether anything at all is granted in `namespace` (it may be listed). */
  allowNamespace(namespace: string): boolean {
    if (this.isManagement) return true;
    const set = this.namespaces.lookup(namespace);
    return set !== undefined && set.size > 0 && !set.has("deny");
  }

  /**
   * Whether `capability` is granted on the variable at `path` (or, for list,
   * under that prefix) in `namespace`; `claim` is the workload calling, whose
   * own job's paths (nomad/jobs, nomad/jobs/<job>[/<group>[/<task>]]) it may
   * read and list.
   */
  allowVariableOperation(namespace: string, path: string, capability: VariableCapability, claim?: WorkloadClaim): boolean {
    if (this.isManagement) return true;
    const key = variableKey(namespace, path);
    const exact = this.variables.lookupExact(key);
    if (exact) return exact.has(capability);
    if (claim && claim.namespace === namespace && workloadPaths(claim).includes(path)) return WORKLOAD_VARIABLE_CAPABILITIES.has(capability);
    return this.variables.closestGlob(key)?.has(capability) ?? false;
  }

  allowHostVolumeOperation(volume: string, capability: HostVolumeCapability): boolean {
    if (this.isManagement) return true;
    return this.hostVolumes.lookup(volume)?.has(capability) ?? false;
  }

  /** Read or write on the agent, node, operator or quota scope: write implies read; deny, or no rule, allows nothing. */
  allowScope(scope: Scope, level: "read" | "write"): boolean {
    if (this.isManagement) return true;
    const held = this.scopes[scope];
    return held === "write" || (level === "read" && held === "read");
  }

  /** The plugin scope: read implies list. */
  allowPlugin(level: "read" | "list"): boolean {
    if (this.isManagement) return true;
    return this.plugin === "read" || (level === "list" && this.plugin === "list");
  }
}

/** The variable paths Nomad's implicit workload policy lets a task read: nomad/jobs, its job's, group's and task's. */
export function workloadPaths(claim: Pick<WorkloadClaim, "job" | "group" | "task">): string[] {
  const job = `nomad/jobs/${claim.job}`;
  return ["nomad/jobs", job, `${job}/${claim.group}`, `${job}/${claim.group}/${claim.task}`];
}
