/**
 * Nomad 1.6's node pools: named sets of nodes a job is placed in. A node
 * joins one (client.node_pool, "default" unless it says); a job names one
 * (node_pool, "default") and is placed only on its nodes. Two are built in
 * and can be neither changed nor deleted: "default", and "all", which holds
 * every node and which no node may join.
 */
import * as v from "valibot";
import { NonNegativeInt, StringMap } from "./common.ts";

export const DEFAULT_NODE_POOL = "default";
export const ALL_NODE_POOL = "all";

/** Nomad's validNodePoolName. */
const NODE_POOL_NAME = /^[a-zA-Z0-9-_]{1,128}$/;
/** Nomad's maxNodePoolDescriptionLength. */
export const MAX_NODE_POOL_DESCRIPTION_LENGTH = 256;

export const NodePoolNameSchema = v.pipe(v.string(), v.regex(NODE_POOL_NAME, `must match regex ${NODE_POOL_NAME.source}`));

/** Nomad's NodePoolSchedulerConfiguration: kept and shown; drover's one scheduler reads neither (Nomad Enterprise's). */
const NodePoolSchedulerConfigurationSchema = v.strictObject({
  SchedulerAlgorithm: v.optional(v.picklist(["", "binpack", "spread"]), ""),
  MemoryOversubscriptionEnabled: v.optional(v.nullable(v.boolean()), null),
});

export const NodePoolSchema = v.strictObject({
  Name: NodePoolNameSchema,
  Description: v.pipe(v.string(), v.maxLength(MAX_NODE_POOL_DESCRIPTION_LENGTH, `description longer than ${MAX_NODE_POOL_DESCRIPTION_LENGTH}`)),
  Meta: v.nullable(StringMap),
  SchedulerConfiguration: v.nullable(NodePoolSchedulerConfigurationSchema),
  CreateIndex: NonNegativeInt,
  ModifyIndex: NonNegativeInt,
});
export type NodePool = v.InferOutput<typeof NodePoolSchema>;

/** The body of PUT /v1/node/pools (api.NodePool): indexes and the hash are the server's, unknown keys are refused. */
export const NodePoolUpsertSchema = v.strictObject({
  Name: v.optional(v.string(), ""),
  Description: v.optional(v.string(), ""),
  Meta: v.optional(v.nullable(StringMap), null),
  SchedulerConfiguration: v.optional(v.nullable(NodePoolSchedulerConfigurationSchema), null),
  CreateIndex: v.optional(v.unknown()),
  ModifyIndex: v.optional(v.unknown()),
  Hash: v.optional(v.unknown()),
});
export type NodePoolUpsert = v.InferOutput<typeof NodePoolUpsertSchema>;

/** Nomad's built-in pools, as it lists them. */
export const BUILT_IN_NODE_POOLS: readonly NodePool[] = [
  { Name: ALL_NODE_POOL, Description: "Node pool with all nodes in the cluster.", Meta: null, SchedulerConfiguration: null, CreateIndex: 1, ModifyIndex: 1 },
  { Name: DEFAULT_NODE_POOL, Description: "Default node pool.", Meta: null, SchedulerConfiguration: null, CreateIndex: 1, ModifyIndex: 1 },
];

export const isBuiltInNodePool = (name: string): boolean => name === ALL_NODE_POOL || name === DEFAULT_NODE_POOL;

/** Whether a node of pool `nodePool` belongs to `pool`: "all" holds every node. */
export const nodeInPool = (pool: string, nodePool: string): boolean => pool === ALL_NODE_POOL || pool === nodePool;
