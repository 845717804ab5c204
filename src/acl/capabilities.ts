/**
 * Nomad's ACL vocabulary: the capabilities a namespace rule grants, the
 * policy levels of each rule, and what a level expands to. Names are
 * Nomad's, so a policy written for Nomad means the same here.
 */

/** Fine-grained capabilities within a namespace (Nomad's acl/policy.go, 0.12 with 1.x's parse-job). */
export const NAMESPACE_CAPABILITIES = [
  "deny",
  "list-jobs",
  "parse-job",
  "read-job",
  "submit-job",
  "dispatch-job",
  "read-logs",
  "read-fs",
  "alloc-exec",
  "alloc-node-exec",
  "alloc-lifecycle",
  "sentinel-override",
  "csi-register-plugin",
  "csi-write-volume",
  "csi-read-volume",
  "csi-list-volume",
  "csi-mount-volume",
  "list-scaling-policies",
  "read-scaling-policy",
  "read-job-scaling",
  "scale-job",
] as const;
export type NamespaceCapability = (typeof NAMESPACE_CAPABILITIES)[number];

/** `policy = ...` of a namespace or host_volume rule. */
export const NAMESPACE_POLICIES = ["deny", "read", "write", "scale"] as const;
export type NamespacePolicy = (typeof NAMESPACE_POLICIES)[number];

/** `policy = ...` of the agent, node, operator and quota rules. */
export const SCOPE_POLICIES = ["deny", "read", "write"] as const;
export type ScopePolicy = (typeof SCOPE_POLICIES)[number];

/** `policy = ...` of the plugin rule. */
export const PLUGIN_POLICIES = ["deny", "read", "list"] as const;
export type PluginPolicy = (typeof PLUGIN_POLICIES)[number];

export const HOST_VOLUME_CAPABILITIES = ["deny", "mount-readonly", "mount-readwrite"] as const;
export type HostVolumeCapability = (typeof HOST_VOLUME_CAPABILITIES)[number];

/** What a `variables { path "..." { capabilities = [...] } }` rule of a namespace grants (Nomad 1.x). */
export const VARIABLE_CAPABILITIES = ["list", "read", "write", "destroy", "deny"] as const;
export type VariableCapability = (typeof VARIABLE_CAPABILITIES)[number];

/** Nomad's expansion of a path's capabilities: deny stands alone, and read implies list. */
export function expandVariableCapabilities(capabilities: readonly VariableCapability[]): VariableCapability[] {
  if (capabilities.includes("deny")) return ["deny"];
  if (capabilities.includes("read") && !capabilities.includes("list")) return [...capabilities, "list"];
  return [...capabilities];
}

/** The rules without a label: one policy level each. */
export const SCOPES = ["agent", "node", "operator", "quota"] as const;
export type Scope = (typeof SCOPES)[number];

const READ: readonly NamespaceCapability[] = [
  "list-jobs",
  "parse-job",
  "read-job",
  "csi-list-volume",
  "csi-read-volume",
  "read-job-scaling",
  "list-scaling-policies",
  "read-scaling-policy",
];

const WRITE: readonly NamespaceCapability[] = [
  ...READ,
  "scale-job",
  "submit-job",
  "dispatch-job",
  "read-logs",
  "read-fs",
  "alloc-exec",
  "alloc-lifecycle",
  "csi-mount-volume",
  "csi-write-volume",
];

/** The capabilities a namespace `policy` stands for, as Nomad expands it (alloc-node-exec is never implied). */
export function expandNamespacePolicy(policy: NamespacePolicy): readonly NamespaceCapability[] {
  switch (policy) {
    case "deny":
      return ["deny"];
    case "read":
      return READ;
    case "write":
      return WRITE;
    case "scale":
      return ["list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job"];
  }
}

export function expandHostVolumePolicy(policy: NamespacePolicy): readonly HostVolumeCapability[] {
  switch (policy) {
    case "deny":
      return ["deny"];
    case "read":
      return ["mount-readonly"];
    case "write":
      return ["mount-readonly", "mount-readwrite"];
    case "scale":
      return [];
  }
}

/** A level of the unlabelled rules, merged across policies: deny wins, then the most privilege. */
export type Level = "deny" | "write" | "read" | "list" | "";

const RANK: Record<Level, number> = { "": 0, list: 1, read: 2, write: 3, deny: 4 };

export function maxLevel(a: Level, b: Level): Level {
  return RANK[a] >= RANK[b] ? a : b;
}
