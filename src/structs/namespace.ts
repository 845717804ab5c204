/**
 * Nomad 1.x's namespaces (open source since 1.0): a name jobs, allocs,
 * evals, deployments and ACL rules are scoped by. "default" always exists
 * and cannot be deleted.
 */
import * as v from "valibot";
import { NonNegativeInt, StringMap } from "./common.ts";

/** Nomad's validNamespaceName. */
const NAMESPACE_NAME = /^[a-zA-Z0-9-]{1,128}$/;
/** Nomad's maxNamespaceDescriptionLength. */
export const MAX_NAMESPACE_DESCRIPTION_LENGTH = 256;

/** What `?namespace=*` names: every namespace (for lists; Nomad's AllNamespacesSentinel). */
export const ALL_NAMESPACES = "*";

export const NamespaceNameSchema = v.pipe(v.string(), v.regex(NAMESPACE_NAME, `must be 1-128 letters, digits or '-' (Nomad's ${NAMESPACE_NAME.source})`));

/** Nomad's Namespace.Capabilities: which task drivers jobs in it may use. */
const NamespaceCapabilitiesSchema = v.strictObject({
  EnabledTaskDrivers: v.optional(v.nullable(v.array(v.string())), null),
  DisabledTaskDrivers: v.optional(v.nullable(v.array(v.string())), null),
});

export const NamespaceSchema = v.strictObject({
  Name: NamespaceNameSchema,
  Description: v.pipe(v.string(), v.maxLength(MAX_NAMESPACE_DESCRIPTION_LENGTH, `must be at most ${MAX_NAMESPACE_DESCRIPTION_LENGTH} characters`)),
  /** Quotas are Nomad Enterprise's: kept as given, enforced by nothing. */
  Quota: v.string(),
  Capabilities: v.nullable(NamespaceCapabilitiesSchema),
  Meta: v.nullable(StringMap),
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
});
export type Namespace = v.InferOutput<typeof NamespaceSchema>;

/** The body of PUT /v1/namespace/:name (api.Namespace): indexes are the server's, unknown keys are refused. */
export const NamespaceUpsertSchema = v.strictObject({
  Name: v.optional(v.string()),
  Description: v.optional(v.string(), ""),
  Quota: v.optional(v.string(), ""),
  Capabilities: v.optional(v.nullable(NamespaceCapabilitiesSchema), null),
  Meta: v.optional(v.nullable(StringMap), null),
  CreateIndex: v.optional(v.unknown()),
  ModifyIndex: v.optional(v.unknown()),
  /** Nomad 1.6 answers these; drover has one node pool and keeps none. */
  NodePoolConfiguration: v.optional(v.unknown()),
  Hash: v.optional(v.unknown()),
});
export type NamespaceUpsert = v.InferOutput<typeof NamespaceUpsertSchema>;

/** The namespace every Nomad cluster starts with, as Nomad lists it. */
export function defaultNamespace(name: string): Namespace {
  return { Name: name, Description: "Default shared namespace", Quota: "", Capabilities: null, Meta: null, CreateIndex: 1, ModifyIndex: 1 };
}
