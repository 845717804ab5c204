/**
 * Real peers for the docker driver's tests: Debian's docker-registry served on
 * 127.0.0.1, images built from Debian's busybox-static with umoci and pushed
 * with skopeo. `missingTools()` names what the machine lacks, so a test can
 * skip saying why (CI installs: docker-registry skopeo umoci busybox-static).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash, sign } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { freePort, waitFor } from "./index.ts";

const TOOLS: Readonly<Record<string, string>> = {
  "/usr/bin/docker-registry": "docker-registry",
  "/usr/bin/skopeo": "skopeo",
  "/usr/bin/umoci": "umoci",
  "/bin/busybox": "busybox-static",
};
/** Applets linked into test images. */
const APPLETS = ["sh", "echo", "cat", "ls", "env", "id", "pwd", "sleep", "true", "test", "mount", "grep", "touch", "df", "tr"];

/** Debian packages this machine lacks for the registry tests, or []. */
export function missingTools(): string[] {
  return Object.entries(TOOLS)
    .filter(([path]) => !existsSync(path))
    .map(([, pkg]) => pkg);
}

function run(argv: string[], cwd?: string): string {
  const result = spawnSync(argv[0]!, argv.slice(1), { cwd, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`${argv.join(" ")}: exit ${result.status}: ${result.stderr}`);
  return result.stdout;
}

export interface Credentials {
  username: string;
  password: string;
}

/** Cheap hashing: the password only guards a registry that lives for one test file. */
const BCRYPT_COST = 5;

/** distribution's `auth: token` settings: where clients get tokens, and the certificates that sign them. */
export interface TokenAuth {
  realm: string;
  service: string;
  issuer: string;
  /** PEM bundle of the certificates a token's x5c chain must lead to. */
  rootCertBundle: string;
}

export interface RegistryOptions {
  /** htpasswd (Basic) auth with these credentials. */
  credentials?: Credentials;
  /** Bearer tokens from a token server (TokenServer). */
  token?: TokenAuth;
  /** Serve HTTPS only, with this certificate and key (PEM files). */
  tls?: {
    cert: string;
    key: string;
    /**
     * Refuse clients without a certificate signed by `ca`; pushes present
     * the one in `certDir` (Docker's certs.d layout for one host:
     * client.cert, client.key).
     */
    clientCa?: { ca: string; certDir: string };
  };
}

export class TestRegistry {
  private constructor(
    readonly host: string,
    readonly storage: string,
    private readonly child: ChildProcess,
    private readonly credentials: Credentials | undefined,
    /** What pushes present to a registry that asks for client certificates. */
    private readonly pushCertDir: string | undefined,
  ) {}

  /**
   * A registry on 127.0.0.1: open, or behind htpasswd (Basic) auth with
   * `options.credentials` (which may also be passed alone), or behind token
   * auth; over HTTPS with `options.tls`.
   */
  static async start(dir: string, auth: Credentials | RegistryOptions = {}): Promise<TestRegistry> {
    const options: RegistryOptions = "username" in auth ? { credentials: auth } : auth;
    const { credentials, token, tls } = options;
    const port = await freePort();
    const storage = join(dir, `registry-storage${credentials || token ? "-auth" : ""}`);
    mkdirSync(storage, { recursive: true });
    const config = join(dir, `registry-${port}.yml`);
    let authYaml = "";
    if (credentials) {
      const htpasswd = join(dir, "htpasswd");
      writeFileSync(htpasswd, `${credentials.username}:${await Bun.password.hash(credentials.password, { algorithm: "bcrypt", cost: BCRYPT_COST })}\n`);
      authYaml = `auth:\n  htpasswd:\n    realm: test\n    path: ${htpasswd}\n`;
    } else if (token) {
      authYaml = `auth:\n  token:\n    realm: ${token.realm}\n    service: ${token.service}\n    issuer: ${token.issuer}\n    rootcertbundle: ${token.rootCertBundle}\n`;
    }
    const clientCas = tls?.clientCa ? `    clientcas:\n      - ${tls.clientCa.ca}\n` : "";
    const tlsYaml = tls ? `  tls:\n    certificate: ${tls.cert}\n    key: ${tls.key}\n${clientCas}` : "";
    writeFileSync(
      config,
      `version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: ${storage}\n  delete:\n    enabled: true\n${authYaml}http:\n  addr: 127.0.0.1:${port}\n${tlsYaml}`,
    );
    const child = spawn("/usr/bin/docker-registry", ["serve", config], { stdio: "ignore" });
    const host = `127.0.0.1:${port}`;
    await waitFor("docker-registry to answer", async () => {
      // A TLS registry may refuse any client without a certificate: there, a listening port is the sign.
      if (tls) return new Promise<boolean>((resolve) => connect(port, "127.0.0.1").once("connect", function (this: Socket) { this.destroy(); resolve(true); }).once("error", () => resolve(false)));
      const response = await fetch(`http://${host}/v2/`).catch(() => null);
      return response !== null && (response.ok || response.status === 401);
    });
    return new TestRegistry(host, storage, child, credentials, tls?.clientCa?.certDir);
  }

  /** Where the registry keeps blob `digest`'s bytes (to corrupt it in a test). */
  blobData(digest: string): string {
    const hex = digest.slice("sha256:".length);
    return join(this.storage, "docker/registry/v2/blobs/sha256", hex.slice(0, 2), hex, "data");
  }

  /** Pushes `layout:tag` as `name`; layers recompressed with `compress` (skopeo's format names) when given. */
  push(layout: string, tag: string, name: string, compress?: "zstd" | "gzip"): void {
    run(this.pushArgv(layout, tag, name, this.credentials, compress));
  }

  /** push, with `credentials` for a token server this process serves (so it must not block). */
  async pushAsync(layout: string, tag: string, name: string, credentials: Credentials): Promise<void> {
    const argv = this.pushArgv(layout, tag, name, credentials);
    const child = Bun.spawn(argv, { stdout: "ignore", stderr: "pipe" });
    const stderr = await new Response(child.stderr).text();
    if ((await child.exited) !== 0) throw new Error(`${argv.join(" ")}: exit ${child.exitCode}: ${stderr}`);
  }

  private pushArgv(layout: string, tag: string, name: string, credentials: Credentials | undefined, compress?: "zstd" | "gzip"): string[] {
    const creds = credentials ? [`--dest-creds=${credentials.username}:${credentials.password}`] : [];
    const format = compress ? ["--dest-compress-format", compress] : [];
    const certDir = this.pushCertDir ? ["--dest-cert-dir", this.pushCertDir] : [];
    return ["skopeo", "copy", "--quiet", "--dest-tls-verify=false", ...certDir, ...creds, ...format, `oci:${layout}:${tag}`, `docker://${this.host}/${name}`];
  }

  stop(): void {
    this.child.kill("SIGKILL");
  }
}

export interface ImageSpec {
  /** Files written into the root besides busybox: path -> content. */
  files?: Record<string, string | Uint8Array>;
  env?: string[];
  entrypoint?: string[];
  cmd?: string[];
  workdir?: string;
  user?: string;
  /** Paths removed in a second layer (whiteouts). */
  remove?: string[];
  /** Layers added last, the nth holding only /layers/<n> ("n\n"). */
  extraLayers?: number;
}

/** Builds an OCI layout at `<dir>/oci` tagged `tag`: a busybox layer, then a layer that removes `remove`. */
export function buildImage(dir: string, tag: string, spec: ImageSpec): string {
  const layout = join(dir, "oci");
  if (!existsSync(layout)) run(["umoci", "init", "--layout", layout]);
  run(["umoci", "new", "--image", `${layout}:${tag}`]);
  const bundle = join(dir, `bundle-${tag}`);
  rmSync(bundle, { recursive: true, force: true });
  run(["umoci", "unpack", "--image", `${layout}:${tag}`, bundle]);
  const rootfs = join(bundle, "rootfs");
  mkdirSync(join(rootfs, "bin"), { recursive: true });
  run(["cp", "/bin/busybox", join(rootfs, "bin/busybox")]);
  for (const applet of APPLETS) symlinkSync("busybox", join(rootfs, "bin", applet));
  for (const [path, content] of Object.entries(spec.files ?? {})) {
    mkdirSync(join(rootfs, path, ".."), { recursive: true });
    writeFileSync(join(rootfs, path), content);
  }
  run(["umoci", "repack", "--image", `${layout}:${tag}`, bundle]);
  if (spec.remove?.length) {
    // A fresh unpack: a bundle's record of its files is the one from its unpack, not its last repack.
    const second = `${bundle}-2`;
    rmSync(second, { recursive: true, force: true });
    run(["umoci", "unpack", "--image", `${layout}:${tag}`, second]);
    for (const path of spec.remove) rmSync(join(second, "rootfs", path), { recursive: true });
    run(["umoci", "repack", "--image", `${layout}:${tag}`, second]);
  }
  const config = ["umoci", "config", "--image", `${layout}:${tag}`];
  for (const env of spec.env ?? []) config.push(`--config.env=${env}`);
  for (const arg of spec.entrypoint ?? []) config.push(`--config.entrypoint=${arg}`);
  for (const arg of spec.cmd ?? []) config.push(`--config.cmd=${arg}`);
  if (spec.workdir) config.push(`--config.workingdir=${spec.workdir}`);
  if (spec.user) config.push(`--config.user=${spec.user}`);
  if (config.length > 4) run(config);
  if (spec.extraLayers) appendLayers(layout, tag, dir, spec.extraLayers);
  return layout;
}

const sha256 = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/**
 * Adds `count` layers to `layout:tag`, the nth holding /layers/<n>, by
 * writing the blobs, config and manifest itself: umoci 0.4.7's `insert`
 * writes tars without their end blocks.
 */
function appendLayers(layout: string, tag: string, dir: string, count: number): void {
  const blob = (digest: string) => join(layout, "blobs/sha256", digest.slice("sha256:".length));
  const writeBlob = (bytes: Uint8Array) => {
    const digest = sha256(bytes);
    writeFileSync(blob(digest), bytes);
    return { digest, size: bytes.length };
  };
  const indexPath = join(layout, "index.json");
  const index = JSON.parse(readFileSync(indexPath, "utf8")) as { manifests: { digest: string; size: number; annotations?: Record<string, string> }[] };
  const entry = index.manifests.find((each) => each.annotations?.["org.opencontainers.image.ref.name"] === tag)!;
  const manifest = JSON.parse(readFileSync(blob(entry.digest), "utf8")) as { config: { digest: string; size: number }; layers: { mediaType: string; digest: string; size: number }[] };
  const config = JSON.parse(readFileSync(blob(manifest.config.digest), "utf8")) as { rootfs: { diff_ids: string[] }; history?: { created_by: string }[] };
  for (let n = 1; n <= count; n++) {
    const source = join(dir, `layer-${tag}-${n}`);
    mkdirSync(join(source, "layers"), { recursive: true });
    writeFileSync(join(source, "layers", String(n)), `${n}\n`);
    const tar = spawnSync("tar", ["-C", source, "--owner=0", "--group=0", "-cf", "-", "layers"]).stdout;
    manifest.layers.push({ mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...writeBlob(gzipSync(tar)) });
    config.rootfs.diff_ids.push(sha256(tar));
    config.history?.push({ created_by: `test layer ${n}` });
  }
  manifest.config = { ...manifest.config, ...writeBlob(Buffer.from(JSON.stringify(config))) };
  Object.assign(entry, writeBlob(Buffer.from(JSON.stringify(manifest))));
  writeFileSync(indexPath, JSON.stringify(index));
}

/** Seconds a token server's token lasts. */
const TOKEN_LIFETIME_S = 300;

/** One token request as the token server saw it. */
export interface TokenRequest {
  service: string | null;
  scopes: string[];
  /** The Basic user name sent, or null for an anonymous request. */
  user: string | null;
}

/**
 * A Docker token server (the `realm` of a registry's Bearer challenge) over
 * HTTPS: it checks Basic credentials, then grants every scope asked for in
 * a JWT signed ES256 by `signer` (its certificate in the x5c header, which
 * docker-registry checks against its rootcertbundle).
 */
export class TokenServer {
  private constructor(
    readonly realm: string,
    /** Every request answered, in order. */
    readonly requests: readonly TokenRequest[],
    private readonly server: ReturnType<typeof Bun.serve>,
  ) {}

  static start(options: { tls: { cert: string; key: string }; signer: { cert: string; key: string }; issuer: string; credentials: Credentials }): TokenServer {
    const { signer, issuer, credentials } = options;
    const x5c = readFileSync(signer.cert, "utf8").replace(/-----[^-]+-----|\s/g, "");
    const signingKey = readFileSync(signer.key, "utf8");
    const base64url = (value: string | Buffer) => Buffer.from(value).toString("base64url");
    const requests: TokenRequest[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: readFileSync(options.tls.cert, "utf8"), key: readFileSync(options.tls.key, "utf8") },
      fetch(request) {
        const url = new URL(request.url);
        const service = url.searchParams.get("service");
        const scopes = url.searchParams.getAll("scope").flatMap((scope) => scope.split(" ").filter(Boolean));
        const header = request.headers.get("authorization");
        const [user, password] = header?.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64").toString().split(":") : [null, null];
        requests.push({ service, scopes, user: user ?? null });
        if (user !== credentials.username || password !== credentials.password) return new Response("unauthorized\n", { status: 401 });
        const now = Math.floor(Date.now() / 1000);
        const access = scopes.map((scope) => {
          const [type, ...rest] = scope.split(":");
          const actions = rest.pop()!.split(",");
          return { type, name: rest.join(":"), actions };
        });
        const claims = { iss: issuer, sub: user, aud: service, exp: now + TOKEN_LIFETIME_S, nbf: now, iat: now, jti: crypto.randomUUID(), access };
        const signed = `${base64url(JSON.stringify({ typ: "JWT", alg: "ES256", x5c: [x5c] }))}.${base64url(JSON.stringify(claims))}`;
        const signature = sign("sha256", Buffer.from(signed), { key: signingKey, dsaEncoding: "ieee-p1363" });
        const token = `${signed}.${base64url(signature)}`;
        return Response.json({ token, access_token: token, expires_in: TOKEN_LIFETIME_S, issued_at: new Date(now * 1000).toISOString() });
      },
    });
    return new TokenServer(`https://127.0.0.1:${server.port}/token`, requests, server);
  }

  stop(): void {
    void this.server.stop(true);
  }
}
