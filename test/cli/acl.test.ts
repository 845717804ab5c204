/**
 * `drover acl ...` against an agent with ACLs on, served over TLS: the token
 * and TLS settings from flags or the environment (drover's variables, then
 * Nomad's), Nomad's output, and the refusals a command without a token gets.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { aclCommand } from "../../src/cli/acl/index.ts";
import { jobCommand } from "../../src/cli/job/index.ts";
import { makeTestCerts, opensslMissing } from "../helpers/tls.ts";
import { tempDir } from "../helpers/index.ts";
import { captureIo, startTestAgent } from "./harness.ts";

if (opensslMissing) console.warn(`skipping the acl CLI tests over TLS: ${opensslMissing}`);

describe.skipIf(opensslMissing !== null)("drover acl over TLS", async () => {
  const certs = opensslMissing ? undefined : makeTestCerts();
  const agent = certs
    ? await startTestAgent({ acl: true, tls: { cert: readFileSync(certs.serverCert, "utf8"), key: readFileSync(certs.serverKey, "utf8"), minVersion: "tls12" } })
    : undefined;
  const env = (extra: Record<string, string> = {}) => ({ DROVER_ADDR: agent!.address, NOMAD_CACERT: certs!.ca, ...extra });
  const run = async (command: typeof aclCommand, argv: string[], vars: Record<string, string> = {}) => {
    const io = captureIo(env(vars));
    const code = await command(argv, io);
    return { code, out: io.out, err: io.err };
  };
  const field = (out: string, key: string) => new RegExp(`^${key}\\s+= (.*)$`, "m").exec(out)?.[1];
  let root = "";

  test("bootstrap shows the secret once; a second bootstrap is refused", async () => {
    const first = await run(aclCommand, ["bootstrap"]);
    expect(first.code).toBe(0);
    expect(field(first.out, "Type")).toBe("management");
    root = field(first.out, "Secret ID")!;
    expect(root).toMatch(/^[0-9a-f-]{36}$/);
    const again = await run(aclCommand, ["bootstrap"]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("ACL bootstrap already done");
  });

  test("a policy from a file, a client token holding it; what the token may and may not do", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "readonly.hcl"), `namespace "default" {\n  policy = "read"\n}\n`);
    expect((await run(aclCommand, ["policy", "apply", "-description", "look, don't touch", "readonly", join(dir, "readonly.hcl")], { NOMAD_TOKEN: root })).out).toBe(
      'Successfully wrote "readonly" ACL policy!\n',
    );
    const listed = await run(aclCommand, ["policy", "list"], { DROVER_TOKEN: root });
    expect(listed.out).toMatch(/readonly\s+look, don't touch/);

    const created = await run(aclCommand, ["token", "create", "-name", "ci", "-policy", "readonly", "-token", root]);
    expect(created.code).toBe(0);
    const secret = field(created.out, "Secret ID")!;
    expect(field(created.out, "Policies")).toBe("[readonly]");

    const self = await run(aclCommand, ["token", "self"], { NOMAD_TOKEN: secret });
    expect(field(self.out, "Name")).toBe("ci");
    // As Nomad's: self shows the secret it was called with.
    expect(field(self.out, "Secret ID")).toBe(secret);

    expect((await run(jobCommand, ["status"], { NOMAD_TOKEN: secret })).code).toBe(0);
    const denied = await run(aclCommand, ["token", "list"], { NOMAD_TOKEN: secret });
    expect(denied).toMatchObject({ code: 1, err: "drover acl token list: Permission denied\n" });
    const listedTokens = await run(aclCommand, ["token", "list", "-token", root]);
    expect(listedTokens.out).toContain(field(created.out, "Accessor ID")!);
    expect(listedTokens.out).not.toContain(secret);

    expect((await run(aclCommand, ["token", "delete", field(created.out, "Accessor ID")!], { NOMAD_TOKEN: root })).code).toBe(0);
    expect((await run(jobCommand, ["status"], { NOMAD_TOKEN: secret })).err).toContain("ACL token not found");
  });

  test("without a token the agent refuses; without the CA the agent's certificate is not trusted", async () => {
    expect((await run(jobCommand, ["status"])).err).toBe("drover job status: Permission denied\n");
    const untrusted = captureIo({ DROVER_ADDR: agent!.address, DROVER_TOKEN: root });
    expect(await jobCommand(["status"], untrusted)).toBe(1);
    expect(untrusted.err).toMatch(/cannot talk TLS with the drover agent at https:.*certificate.*-ca-cert/);
    const plain = captureIo({ DROVER_ADDR: agent!.address.replace("https:", "http:"), DROVER_TOKEN: root });
    expect(await jobCommand(["status"], plain)).toBe(1);
    expect(plain.err).toContain("if it serves TLS, use an https:// address");
    expect((await run(jobCommand, ["status", "-ca-cert", "/nonexistent/ca.pem"], { NOMAD_TOKEN: root })).err).toContain("cannot read the CA certificate /nonexistent/ca.pem");
  });

  test("a bad rules file is refused with the problem named", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "bad.hcl"), `namespace "default" {\n  policy = "sudo"\n}\n`);
    const bad = await run(aclCommand, ["policy", "apply", "bad", join(dir, "bad.hcl")], { NOMAD_TOKEN: root });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('namespace "default": policy: expected one of "deny", "read", "write", "scale"');
  });
});
