/**
 * Builds the alloc's directory before any task runs, on a file system of its
 * ephemeral_disk size where the host allows (allocdir/disk-image.ts); removes
 * both when the alloc is destroyed.
 */
import { allocTaskGroup } from "../../../structs/alloc.ts";
import type { DiskImages } from "../../allocdir/disk-image.ts";
import type { AllocHook } from "./hook.ts";

/** Without `images`, alloc dirs stay on the host's file system (ephemeral_disk is then polled). */
export function allocDirHook(images?: DiskImages): AllocHook {
  return {
    name: "alloc_dir",
    async prerun({ alloc, allocDir }) {
      const sizeMb = allocTaskGroup(alloc)?.EphemeralDisk.SizeMB;
      if (images && sizeMb) await images.attach(allocDir, sizeMb);
      allocDir.build();
    },
    async destroy({ allocDir }) {
      await allocDir.destroy();
      await images?.remove(allocDir.allocId);
    },
  };
}
