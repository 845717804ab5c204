/**
 * Certificates for TLS tests, made fresh in the test's own temp dir with
 * openssl (nothing secret is checked in): a CA, a server certificate for
 * 127.0.0.1, localhost and Nomad's names (client.global.nomad, which Nomad's
 * CLI asks for when it talks to a node directly), and a client certificate.
 * A second, unrelated CA signs an "impostor" client certificate.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./index.ts";

export interface TestCerts {
  dir: string;
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
  impostorCert: string;
  impostorKey: string;
}

/** Why TLS tests cannot run here, or null when openssl is on the PATH. */
export const opensslMissing: string | null = Bun.which("openssl") ? null : "openssl is not on the PATH (it makes the test certificates)";

function openssl(dir: string, ...args: string[]): void {
  const run = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`openssl ${args.join(" ")}: ${run.stderr.toString()}`);
}

function authority(dir: string, name: string): void {
  openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", `/CN=${name}`, "-keyout", `${name}.key`, "-out", `${name}.pem`);
}

function issue(dir: string, ca: string, name: string, extensions: string): void {
  openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", `/CN=${name}`, "-keyout", `${name}.key`, "-out", `${name}.csr`);
  writeFileSync(join(dir, `${name}.ext`), extensions);
  openssl(dir, "x509", "-req", "-in", `${name}.csr`, "-CA", `${ca}.pem`, "-CAkey", `${ca}.key`, "-CAcreateserial", "-days", "1", "-extfile", `${name}.ext`, "-out", `${name}.pem`);
}

/** Certificates in a fresh temp dir removed after the test file. */
export function makeTestCerts(): TestCerts {
  return makeCertsIn(tempDir("drover-tls-"));
}

/** Certificates in `dir` (benchmarks, which clean up themselves). */
export function makeCertsIn(dir: string): TestCerts {
  authority(dir, "ca");
  authority(dir, "other-ca");
  issue(dir, "ca", "server", "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:client.global.nomad,DNS:server.global.nomad\nextendedKeyUsage=serverAuth,clientAuth\n");
  issue(dir, "ca", "client", "extendedKeyUsage=clientAuth\n");
  issue(dir, "other-ca", "impostor", "extendedKeyUsage=clientAuth\n");
  const at = (file: string) => join(dir, file);
  return {
    dir,
    ca: at("ca.pem"),
    serverCert: at("server.pem"),
    serverKey: at("server.key"),
    clientCert: at("client.pem"),
    clientKey: at("client.key"),
    impostorCert: at("impostor.pem"),
    impostorKey: at("impostor.key"),
  };
}
