/**
 * Nomad's task `logs` block (LogConfig): its defaults and the bounds that
 * both the job validator and the log pump enforce, so a job the server
 * accepts never fails on the node for its log settings.
 */
import * as v from "valibot";

/** Nomad's defaults: 10 files of 10 MiB per stream. */
export const DEFAULT_LOG_MAX_FILES = 10;
export const DEFAULT_LOG_MAX_FILE_SIZE_MB = 10;

/** Bounds that keep a typo from filling a disk or opening thousands of files. */
export const MAX_LOG_FILES = 10_000;
export const MAX_LOG_FILE_SIZE_MB = 1 << 20;

export const LogMaxFilesSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_LOG_FILES));
export const LogMaxFileSizeMbSchema = v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(MAX_LOG_FILE_SIZE_MB));
