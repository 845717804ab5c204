/** Unlinks a file (never following a symlink there); one already gone is fine, any other failure throws. */
import { unlinkSync } from "node:fs";

export function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
