/**
 * Whether this host gives alloc dirs file systems of their own
 * (client/allocdir/disk-image.ts): ephemeral_disk is then a hard limit, and
 * each alloc dir is a mount of its own.
 */
import { join } from "node:path";
import pino from "pino";
import { DiskImages } from "../../src/client/allocdir/disk-image.ts";
import { tempDir } from "./index.ts";

export const hardDiskLimit = (await new DiskImages(join(tempDir("drover-disk-probe-"), "alloc"), pino({ level: "silent" })).unavailable()) === null;
