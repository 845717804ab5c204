/**
 * The overlay's one-string options, for kernels before 6.8 (no "lowerdir+"):
 * what mount(2) is handed, and how many layers fit in its page.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { overlayOptions, PAGE_BYTES } from "../../src/nsenter/overlay.ts";

const STORE = "/var/lib/drover/data/images/layers";
const hex = (n: number) => createHash("sha256").update(String(n)).digest("hex");
const image = (count: number, dir = STORE) => ({
  layers: Array.from({ length: count }, (_, n) => `${dir}/${hex(n)}`),
  upperDir: "/var/lib/drover/data/alloc/0b5c4c1e-8f0e-4a52-9c1d-2f5a8e3d7c61/web/.rootfs/upper",
  workDir: "/var/lib/drover/data/alloc/0b5c4c1e-8f0e-4a52-9c1d-2f5a8e3d7c61/web/.rootfs/work",
});

describe("overlayfs options in one string", () => {
  test("layers are named relative to the store's layers dir, top layer first", () => {
    const { cwd, options } = overlayOptions(image(2));
    expect(cwd).toBe(STORE);
    expect(options).toBe(`lowerdir=${hex(1)}:${hex(0)},upperdir=${image(2).upperDir},workdir=${image(2).workDir}`);
  });

  test("60 layers fit in a page that their full paths would overflow", () => {
    const sixty = image(60);
    expect(overlayOptions(sixty).options.length).toBeLessThan(PAGE_BYTES);
    expect(sixty.layers.join(":").length).toBeGreaterThan(PAGE_BYTES);
  });

  test("layers from different dirs keep their full paths; a ',' or ':' in a path is refused", () => {
    const mixed = { ...image(1), layers: ["/a/layer", "/b/layer"] };
    expect(overlayOptions(mixed)).toEqual({ cwd: null, options: `lowerdir=/b/layer:/a/layer,upperdir=${mixed.upperDir},workdir=${mixed.workDir}` });
    expect(() => overlayOptions({ ...image(1), layers: ["/a,b/layer"] })).toThrow('image path /a,b/layer holds a "," or ":"');
  });
});
