/**
 * The HTTP API over TLS: what a client must offer (TLS 1.2 or later, a
 * modern suite, and a certificate from the CA when one is asked for).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { serveHttp, type ServeTls } from "../../src/runtime/serve.ts";
import { makeTestCerts, opensslMissing } from "../helpers/tls.ts";

if (opensslMissing) console.warn(`skipping the TLS serving tests: ${opensslMissing}`);

const hello = () => new Response("hello");

/** What `openssl s_client` with `args` negotiated with 127.0.0.1:port: "TLSv1.2 <cipher>", or "refused". */
async function handshake(port: number, ...args: string[]): Promise<string> {
  const child = Bun.spawn(["openssl", "s_client", "-connect", `127.0.0.1:${port}`, ...args], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  child.stdin.end();
  const out = await new Response(child.stdout).text();
  await child.exited;
  const match = /New, (TLSv[\d.]+), Cipher is (\S+)/.exec(out);
  return match ? `${match[1]} ${match[2]}` : "refused";
}

describe.skipIf(opensslMissing !== null)("serving over TLS", () => {
  const certs = opensslMissing ? undefined : makeTestCerts();
  const tls = (extra: Partial<ServeTls> = {}): ServeTls => ({ cert: readFileSync(certs!.serverCert, "utf8"), key: readFileSync(certs!.serverKey, "utf8"), minVersion: "tls12", ...extra });

  test("TLS 1.2 with forward secrecy and AEAD, or 1.3; never 1.0, 1.1 or a static-RSA or CBC suite", async () => {
    const server = serveHttp(hello, "127.0.0.1", 0, tls());
    try {
      expect(await handshake(server.port, "-tls1_3")).toStartWith("TLSv1.3 ");
      expect(await handshake(server.port, "-tls1_2")).toMatch(/^TLSv1\.2 ECDHE-ECDSA-(AES\d+-GCM|CHACHA20)/);
      expect(await handshake(server.port, "-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0")).toBe("refused");
      expect(await handshake(server.port, "-tls1", "-cipher", "DEFAULT:@SECLEVEL=0")).toBe("refused");
      expect(await handshake(server.port, "-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0")).toBe("refused");
      const res = await fetch(`https://127.0.0.1:${server.port}/`, { tls: { ca: readFileSync(certs!.ca, "utf8") } });
      expect(await res.text()).toBe("hello");
    } finally {
      await server.stop(true);
    }
  });

  test("tls13 as the minimum refuses 1.2", async () => {
    const server = serveHttp(hello, "127.0.0.1", 0, tls({ minVersion: "tls13" }));
    try {
      expect(await handshake(server.port, "-tls1_2")).toBe("refused");
      expect(await handshake(server.port, "-tls1_3")).toStartWith("TLSv1.3 ");
    } finally {
      await server.stop(true);
    }
  });

  test("with a client CA, only a client with a certificate it signed gets an answer", async () => {
    const server = serveHttp(hello, "127.0.0.1", 0, tls({ clientCa: readFileSync(certs!.ca, "utf8") }));
    const ca = readFileSync(certs!.ca, "utf8");
    const get = (cert?: string, key?: string) =>
      fetch(`https://127.0.0.1:${server.port}/`, { tls: { ca, ...(cert && key ? { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") } : {}) } }).then(
        async (res) => res.text(),
        () => "refused",
      );
    try {
      expect(await get(certs!.clientCert, certs!.clientKey)).toBe("hello");
      expect(await get()).toBe("refused");
      expect(await get(certs!.impostorCert, certs!.impostorKey)).toBe("refused");
    } finally {
      await server.stop(true);
    }
  });
});
