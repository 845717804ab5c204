/**
 * The image store and registry client against a real registry (Debian's
 * docker-registry on 127.0.0.1) holding images built with umoci from
 * busybox-static and pushed with skopeo.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { ImagePuller, readImageConfig, type PullOptions } from "../../../src/drivers/docker/pull.ts";
import { ImageStore } from "../../../src/drivers/docker/store.ts";
import { credentialsFor } from "../../../src/drivers/docker/credentials.ts";
import { buildImage, missingTools, TestRegistry } from "../../helpers/registry.ts";
import { tempDir } from "../../helpers/index.ts";

const missing = missingTools();
if (missing.length > 0) console.log(`skipping image pull tests: missing Debian packages ${missing.join(", ")}`);

const dir = tempDir("drover-pull-");
let registry: TestRegistry;
const options: PullOptions = { insecureRegistries: [], timeoutMs: 60_000, forcePull: false };

beforeAll(async () => {
  if (missing.length > 0) return;
  registry = await TestRegistry.start(dir);
  const layout = buildImage(join(dir, "build"), "base", {
    files: { "/etc/greeting": "hello from the image\n", "/etc/doomed": "gone\n" },
    env: ["GREETING=hi", "PATH=/bin"],
    cmd: ["/bin/cat", "/etc/greeting"],
    workdir: "/etc",
    remove: ["/etc/doomed"],
  });
  registry.push(layout, "base", "test/busybox:1");
});
afterAll(() => registry?.stop());

describe.skipIf(missing.length > 0)("pulling from a registry", () => {
  test("an image is stored by digest, its layers unpacked with the whiteout in overlay format", async () => {
    const store = new ImageStore(join(dir, "store"));
    const image = await new ImagePuller(store).pull(`${registry.host}/test/busybox:1`, options);
    expect(image.name).toBe(`${registry.host}/test/busybox:1`);
    expect(image.layers).toHaveLength(2);
    const [bottom, top] = image.layers.map((layer) => store.layerDir(layer));
    expect(readFileSync(join(bottom!, "etc/greeting"), "utf8")).toBe("hello from the image\n");
    expect(lstatSync(join(bottom!, "bin/busybox")).isFile()).toBe(true);
    // Deleted in the top layer: a 0/0 character device there.
    const whiteout = lstatSync(join(top!, "etc/doomed"));
    expect(whiteout.isCharacterDevice()).toBe(true);
    expect(whiteout.rdev).toBe(0);
    const config = readImageConfig(store, image.config);
    expect(config.config?.Env).toContain("GREETING=hi");
    expect(config.config?.WorkingDir).toBe("/etc");
    // Layer blobs are gone once unpacked: one copy of each layer.
    for (const layer of image.layers) expect(store.hasBlob(layer)).toBe(false);
  });

  test("an image index gives this host's linux/<arch> image; an index without one is refused naming what it has", async () => {
    const raw = spawnSync("skopeo", ["inspect", "--raw", "--tls-verify=false", `docker://${registry.host}/test/busybox:1`], { encoding: "utf8" }).stdout;
    const digest = `sha256:${new Bun.CryptoHasher("sha256").update(raw).digest("hex")}`;
    const entry = (architecture: string) => ({ mediaType: "application/vnd.oci.image.manifest.v1+json", digest, size: Buffer.byteLength(raw), platform: { os: "linux", architecture } });
    const putIndex = async (tag: string, architectures: string[]) => {
      const response = await fetch(`http://${registry.host}/v2/test/busybox/manifests/${tag}`, {
        method: "PUT",
        headers: { "content-type": "application/vnd.oci.image.index.v1+json" },
        body: JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: architectures.map(entry) }),
      });
      expect(response.status).toBe(201);
    };
    const arch = process.arch === "x64" ? "amd64" : process.arch;
    await putIndex("multi", ["s390x", arch]);
    await putIndex("foreign", ["s390x", "riscv64"]);
    const store = new ImageStore(join(dir, "store-index"));
    expect((await new ImagePuller(store).pull(`${registry.host}/test/busybox:multi`, options)).manifest).toBe(digest);
    await expect(new ImagePuller(store).pull(`${registry.host}/test/busybox:foreign`, options)).rejects.toThrow(`has no linux/${arch} image (it has linux/s390x, linux/riscv64)`);
  });

  test("zstd layers are unpacked too", async () => {
    const layout = buildImage(join(dir, "build"), "zstd", { files: { "/etc/zstd": "squeezed\n" } });
    registry.push(layout, "zstd", "test/zstd:1", "zstd");
    const manifest = JSON.parse(spawnSync("skopeo", ["inspect", "--raw", "--tls-verify=false", `docker://${registry.host}/test/zstd:1`], { encoding: "utf8" }).stdout);
    expect(manifest.layers[0].mediaType).toContain("zstd");
    const store = new ImageStore(join(dir, "store-zstd"));
    const image = await new ImagePuller(store).pull(`${registry.host}/test/zstd:1`, options);
    expect(readFileSync(join(store.layerDir(image.layers[0]!), "etc/zstd"), "utf8")).toBe("squeezed\n");
  });

  test("a second pull of a stored image asks the registry nothing; two concurrent pulls unpack once", async () => {
    const store = new ImageStore(join(dir, "store-concurrent"));
    const puller = new ImagePuller(store);
    const [a, b] = await Promise.all([puller.pull(`${registry.host}/test/busybox:1`, options), puller.pull(`${registry.host}/test/busybox:1`, options)]);
    expect(a).toEqual(b);
    expect(readdirSync(join(store.root, "layers")).sort()).toEqual(a.layers.map((layer) => layer.slice(7)).sort());
    registry.stop();
    try {
      expect((await puller.pull(`${registry.host}/test/busybox:1`, options)).config).toBe(a.config);
    } finally {
      registry = await TestRegistry.start(dir);
    }
  });

  test("a layer whose bytes do not match its digest is refused, and nothing of it is kept", async () => {
    const store = new ImageStore(join(dir, "store-corrupt"));
    const layout = buildImage(join(dir, "build"), "corrupt", { files: { "/etc/corrupt": "x\n" } });
    registry.push(layout, "corrupt", "test/corrupt:1");
    const manifest = JSON.parse(spawnSync("skopeo", ["inspect", "--raw", "--tls-verify=false", `docker://${registry.host}/test/corrupt:1`], { encoding: "utf8" }).stdout);
    const layer: string = manifest.layers.at(-1).digest;
    writeFileSync(registry.blobData(layer), "not the layer\n");
    await expect(new ImagePuller(store).pull(`${registry.host}/test/corrupt:1`, options)).rejects.toThrow(`${layer}: the content received hashes to sha256:`);
    expect(store.hasBlob(layer)).toBe(false);
    expect(existsSync(store.layerDir(layer))).toBe(false);
    expect(store.findImage(`${registry.host}/test/corrupt:1`)).toBeNull();
  });

  test("a registry behind Basic auth: refused without credentials, saying why; pulled with the job's or a Docker config.json's", async () => {
    const credentials = { username: "alice", password: "s3cret" };
    const guarded = await TestRegistry.start(join(dir, "guarded"), credentials);
    try {
      guarded.push(buildImage(join(dir, "build"), "base", {}), "base", "test/private:1");
      const name = `${guarded.host}/test/private:1`;
      const store = new ImageStore(join(dir, "store-auth"));
      await expect(new ImagePuller(store).pull(name, options)).rejects.toThrow(`${guarded.host} asks for a user name and password: set the job's auth block or the docker plugin's auth`);
      await expect(new ImagePuller(store).pull(name, { ...options, credentials: { username: "alice", password: "wrong" } })).rejects.toThrow("401 Unauthorized");
      expect((await new ImagePuller(store).pull(name, { ...options, credentials })).name).toBe(name);
      const configFile = join(dir, "docker-config.json");
      writeFileSync(configFile, JSON.stringify({ auths: { [guarded.host]: { auth: Buffer.from("alice:s3cret").toString("base64") } } }));
      expect(credentialsFor(guarded.host, undefined, configFile)).toEqual(credentials);
      expect(credentialsFor("other.example", undefined, configFile)).toBeUndefined();
      const fromConfig = new ImageStore(join(dir, "store-auth-config"));
      expect((await new ImagePuller(fromConfig).pull(name, { ...options, credentials: credentialsFor(guarded.host, undefined, configFile) })).name).toBe(name);
    } finally {
      guarded.stop();
    }
  });

  test("a pull longer than image_pull_timeout is refused saying so, and keeps nothing", async () => {
    const store = new ImageStore(join(dir, "store-timeout"));
    await expect(new ImagePuller(store).pull(`${registry.host}/test/busybox:1`, { ...options, timeoutMs: 1 })).rejects.toThrow(
      `pull of ${registry.host}/test/busybox:1 did not finish within image_pull_timeout (1ms)`,
    );
    expect(store.findImage(`${registry.host}/test/busybox:1`)).toBeNull();
  });

  test("an image the registry does not have is a clear error naming it", async () => {
    const store = new ImageStore(join(dir, "store-missing"));
    await expect(new ImagePuller(store).pull(`${registry.host}/test/nothing:1`, options)).rejects.toThrow("404");
  });
});
