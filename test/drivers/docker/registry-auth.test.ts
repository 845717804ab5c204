/**
 * The registry client against registries that need more than plain HTTP:
 * Debian's docker-registry serving HTTPS with a certificate from a CA the
 * test makes (trusted through Docker's certs.d layout), behind htpasswd
 * (Basic) auth, and behind token auth with a token server written here
 * (ES256 JWTs with an x5c header, as distribution 2.8 checks them).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { credentialsFor } from "../../../src/drivers/docker/credentials.ts";
import { ImagePuller, type PullOptions } from "../../../src/drivers/docker/pull.ts";
import { ImageStore } from "../../../src/drivers/docker/store.ts";
import { tempDir } from "../../helpers/index.ts";
import { buildImage, missingTools, TestRegistry, TokenServer } from "../../helpers/registry.ts";
import { makeCertsIn, opensslMissing, type TestCerts } from "../../helpers/tls.ts";

const missing = missingTools();
const why = missing.length > 0 ? `missing Debian packages ${missing.join(", ")}` : opensslMissing;
if (why) console.log(`skipping registry auth tests: ${why}`);

const dir = tempDir("drover-registry-auth-");
const alice = { username: "alice", password: "s3cret" };
const SERVICE = "drover-test-registry";
const ISSUER = "drover-test-issuer";
let certs: TestCerts;
let layout: string;
/** certs.d with the test CA for a registry's host. */
let certsDir: string;
const started: { stop(): void }[] = [];

beforeAll(() => {
  if (why) return;
  const certDir = join(dir, "certs");
  mkdirSync(certDir);
  certs = makeCertsIn(certDir);
  layout = buildImage(join(dir, "build"), "base", { files: { "/etc/greeting": "hello over TLS\n" } });
  certsDir = join(dir, "certs.d");
});
afterAll(() => {
  for (const each of started) each.stop();
});

/** Docker's layout: the CA as `<certs.d>/<host>/ca.crt`. */
function trust(host: string): void {
  mkdirSync(join(certsDir, host), { recursive: true });
  copyFileSync(certs.ca, join(certsDir, host, "ca.crt"));
}

const options = (extra: Partial<PullOptions> = {}): PullOptions => ({ insecureRegistries: [], timeoutMs: 60_000, forcePull: false, certsDir, ...extra });

describe.skipIf(why !== null)("a TLS registry behind Basic auth", () => {
  let registry: TestRegistry;
  let name: string;

  beforeAll(async () => {
    registry = await TestRegistry.start(join(dir, "basic"), { credentials: alice, tls: { cert: certs.serverCert, key: certs.serverKey } });
    started.push(registry);
    registry.push(layout, "base", "test/private:1");
    name = `${registry.host}/test/private:1`;
  });

  test("its CA in certs.d/<host>/ca.crt and the job's auth block: pulled over HTTPS", async () => {
    trust(registry.host);
    const store = new ImageStore(join(dir, "store-basic"));
    const image = await new ImagePuller(store).pull(name, options({ credentials: credentialsFor(registry.host, alice, undefined) }));
    expect(image.name).toBe(name);
    expect(image.layers).toHaveLength(1);
  });

  test("a wrong password is refused naming the registry and the user, and nothing is stored", async () => {
    trust(registry.host);
    const store = new ImageStore(join(dir, "store-basic-wrong"));
    await expect(new ImagePuller(store).pull(name, options({ credentials: { username: "alice", password: "wrong" } }))).rejects.toThrow(
      `${registry.host} refused the credentials of user "alice" (401 Unauthorized)`,
    );
    expect(store.findImage(name)).toBeNull();
  });

  test("with its CA not trusted, the error says TLS failed and where the CA goes", async () => {
    const elsewhere = join(dir, "empty-certs.d");
    const store = new ImageStore(join(dir, "store-untrusted"));
    const failure = new ImagePuller(store).pull(name, options({ credentials: alice, certsDir: elsewhere }));
    await expect(failure).rejects.toThrow(`${registry.host} serves TLS, but no TLS connection could be made (`);
    await expect(failure).rejects.toThrow(`: put its CA in ${join(elsewhere, registry.host)}/ca.crt`);
  });
});

describe.skipIf(why !== null)("a TLS registry that asks for a client certificate", () => {
  let registry: TestRegistry;
  let name: string;
  /** The client certificate in Docker's layout, as skopeo's --dest-cert-dir reads it too. */
  let clientDir: string;

  beforeAll(async () => {
    clientDir = join(dir, "client-certs");
    mkdirSync(clientDir);
    copyFileSync(certs.clientCert, join(clientDir, "client.cert"));
    copyFileSync(certs.clientKey, join(clientDir, "client.key"));
    const tls = { cert: certs.serverCert, key: certs.serverKey, clientCa: { ca: certs.ca, certDir: clientDir } };
    registry = await TestRegistry.start(join(dir, "mtls"), { tls });
    started.push(registry);
    registry.push(layout, "base", "test/mtls:1");
    name = `${registry.host}/test/mtls:1`;
    trust(registry.host);
  });

  test("certs.d/<host>/NAME.cert and NAME.key are shown to it, and the pull succeeds; without them the TLS handshake fails, saying so", async () => {
    const store = new ImageStore(join(dir, "store-mtls"));
    await expect(new ImagePuller(store).pull(name, options())).rejects.toThrow(`${registry.host} serves TLS, but no TLS connection could be made (`);
    const own = join(certsDir, registry.host);
    copyFileSync(join(clientDir, "client.cert"), join(own, "client.cert"));
    copyFileSync(join(clientDir, "client.key"), join(own, "client.key"));
    expect((await new ImagePuller(store).pull(name, options())).name).toBe(name);
  });

  test("a NAME.cert without its NAME.key is refused naming both", async () => {
    const lone = join(dir, "lone-certs.d");
    mkdirSync(join(lone, registry.host), { recursive: true });
    copyFileSync(certs.ca, join(lone, registry.host, "ca.crt"));
    copyFileSync(certs.clientCert, join(lone, registry.host, "mine.cert"));
    const store = new ImageStore(join(dir, "store-mtls-lone"));
    await expect(new ImagePuller(store).pull(name, options({ certsDir: lone }))).rejects.toThrow(`${join(lone, registry.host, "mine.cert")}: client certificate without its key mine.key`);
  });
});

describe.skipIf(why !== null)("a TLS registry behind Bearer token auth", () => {
  let registry: TestRegistry;
  let tokens: TokenServer;
  let name: string;

  beforeAll(async () => {
    // The token server signs with the second CA's key; the registry trusts that certificate for tokens.
    const signer = { cert: join(certs.dir, "other-ca.pem"), key: join(certs.dir, "other-ca.key") };
    tokens = TokenServer.start({ tls: { cert: certs.serverCert, key: certs.serverKey }, signer, issuer: ISSUER, credentials: alice });
    started.push(tokens);
    const token = { realm: tokens.realm, service: SERVICE, issuer: ISSUER, rootCertBundle: signer.cert };
    registry = await TestRegistry.start(join(dir, "bearer"), { token, tls: { cert: certs.serverCert, key: certs.serverKey } });
    started.push(registry);
    await registry.pushAsync(layout, "base", "test/private:1", alice);
    name = `${registry.host}/test/private:1`;
    trust(registry.host);
  });

  test("the client follows WWW-Authenticate to the realm, gets a token for the repository's pull scope, and pulls", async () => {
    const before = tokens.requests.length;
    const store = new ImageStore(join(dir, "store-bearer"));
    const image = await new ImagePuller(store).pull(name, options({ credentials: alice }));
    expect(image.name).toBe(name);
    const asked = tokens.requests.slice(before);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked[0]).toEqual({ service: SERVICE, scopes: ["repository:test/private:pull"], user: "alice" });
  });

  test("wrong credentials: the token service's 401 is the error, naming the registry and the user", async () => {
    const store = new ImageStore(join(dir, "store-bearer-wrong"));
    await expect(new ImagePuller(store).pull(name, options({ credentials: { username: "alice", password: "wrong" } }))).rejects.toThrow(
      `${registry.host}: its token service ${tokens.realm} refused a token for user "alice": 401 Unauthorized`,
    );
    expect(store.findImage(name)).toBeNull();
  });

  test("no credentials: the anonymous token request is refused the same way", async () => {
    const store = new ImageStore(join(dir, "store-bearer-anonymous"));
    await expect(new ImagePuller(store).pull(name, options())).rejects.toThrow(`${registry.host}: its token service ${tokens.realm} refused a token: 401 Unauthorized`);
  });
});
