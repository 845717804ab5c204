/**
 * Bounds on what one job may ask for, so that no request can make the
 * server do unbounded work (placing a billion allocs would hold the agent's
 * one thread for hours) or store a value no node could ever honour. Each is
 * far above what a real job needs.
 */

/** Allocs of one group; drover's goal is a thousand tasks on one node. */
export const MAX_GROUP_COUNT = 10_000;
/** Allocs of one job, summed over its groups. */
export const MAX_JOB_COUNT = 10_000;
/** A task's CPU in MHz: 16 THz, beyond any host. */
export const MAX_CPU_MHZ = 1 << 24;
/** A task's memory, or a group's disk, in MB: 16 TiB, beyond any host. */
export const MAX_MEMORY_MB = 1 << 24;
export const MAX_DISK_MB = 1 << 24;
