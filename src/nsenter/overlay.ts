/**
 * An image's root: its layers, read-only and shared, under the task's own
 * upper dir. Everything the task writes lands there, and the overlay lives
 * only in the task's mount namespace, so it is gone when the task is.
 *
 *   Linux 6.8+   fsopen("overlay"), one "lowerdir+" key per layer, fsmount,
 *                move_mount: no limit but overlayfs' own (500 layers)
 *   older        mount(2) with one option string, which the kernel takes up
 *                to a page. The layers are named relative to the store's
 *                layers dir (the role's working dir for that call), so a
 *                layer costs its 64-hex name: about 60 layers, where full
 *                paths allowed about 40. Past a page the start fails saying so.
 */
import { dirname } from "node:path";
import { chdir, errno, fsconfigString, fsmountCreate, fsopen, mount, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOSUID, moveMountTo, MS_NODEV, MS_NOSUID, sysClose } from "../runtime/libc.ts";
import { IsolationError, must } from "./errors.ts";
import type { ImageRoot } from "./spec.ts";

/** What mount(2) copies of its options: one page, its last byte the terminating NUL. */
export const PAGE_BYTES = 4096;

/** Mounts the image's overlay on `target`. */
export function mountImage(target: string, image: ImageRoot): void {
  if (mountOverlayByKeys(target, image)) return;
  const { cwd, options } = overlayOptions(image);
  if (options.length >= PAGE_BYTES) {
    throw new IsolationError(`the image's ${image.layers.length} layers make overlayfs options of ${options.length} bytes, over the ${PAGE_BYTES} this kernel takes (Linux 6.8+ takes any number)`);
  }
  if (cwd) must(chdir(cwd), `chdir ${cwd}`);
  try {
    must(mount("overlay", target, "overlay", MS_NOSUID | MS_NODEV, options), `mount the image's layers on ${target}`);
  } finally {
    if (cwd) must(chdir("/"), "chdir /");
  }
}

/**
 * The one-string form: top layer first. Layers that share a directory (the
 * store keeps them so) are named relative to it, `cwd`; the upper and work
 * dirs stay absolute.
 */
export function overlayOptions(image: ImageRoot): { cwd: string | null; options: string } {
  const paths = [...image.layers, image.upperDir, image.workDir];
  // overlayfs splits its options on "," and lower dirs on ":".
  const odd = paths.find((path) => /[,:]/.test(path));
  if (odd) throw new IsolationError(`image path ${odd} holds a "," or ":", which overlayfs options cannot carry`);
  const parent = dirname(image.layers[0]!);
  const shared = image.layers.every((layer) => dirname(layer) === parent);
  const lowers = [...image.layers].reverse().map((layer) => (shared ? layer.slice(parent.length + 1) : layer));
  return { cwd: shared ? parent : null, options: `lowerdir=${lowers.join(":")},upperdir=${image.upperDir},workdir=${image.workDir}` };
}

/** The overlay through fsopen/fsconfig; false when this kernel has no "lowerdir+" (before 6.8). */
function mountOverlayByKeys(target: string, image: ImageRoot): boolean {
  const EINVAL = 22;
  const lowers = [...image.layers].reverse();
  const context = fsopen("overlay");
  if (context < 0) return false;
  try {
    for (const [index, lower] of lowers.entries()) {
      if (fsconfigString(context, "lowerdir+", lower) === 0) continue;
      if (index === 0 && errno() === EINVAL) return false;
      must(-1, `add layer ${lower} to the overlay`);
    }
    // Named in mountinfo as mount(2) names it.
    must(fsconfigString(context, "source", "overlay"), "name the overlay");
    must(fsconfigString(context, "upperdir", image.upperDir), `set the overlay's upper dir ${image.upperDir}`);
    must(fsconfigString(context, "workdir", image.workDir), `set the overlay's work dir ${image.workDir}`);
    const overlay = fsmountCreate(context, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    must(overlay, `create the overlay of the image's ${lowers.length} layers`);
    try {
      must(moveMountTo(overlay, target), `mount the image's layers on ${target}`);
    } finally {
      sysClose(overlay);
    }
    return true;
  } finally {
    sysClose(context);
  }
}
