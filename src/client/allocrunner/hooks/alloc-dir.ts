/** Builds the alloc's directory before any task runs; removes it when the alloc is destroyed. */
import type { AllocHook } from "./hook.ts";

export function allocDirHook(): AllocHook {
  return {
    name: "alloc_dir",
    async prerun({ allocDir }) {
      allocDir.build();
    },
    async destroy({ allocDir }) {
      await allocDir.destroy();
    },
  };
}
