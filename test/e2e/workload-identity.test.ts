/**
 * The compiled agent with ACLs on: a task whose job asks for its workload
 * identity (identity { env file }) gets a JWT that verifies against the
 * agent's JWKS and reads its own job's variables, and nothing else; the
 * token dies with the allocation. A named identity (`identity { name aud
 * ttl env file }`) gets its own token, NOMAD_TOKEN_<name> and
 * secrets/nomad_<name>.jwt. Its template reads the job's variable
 * through that identity and renders it again when it changes. A key
 * rotation (`drover operator root keyring rotate`) while the task runs
 * leaves its token working.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { createPublicKey, verify } from "node:crypto";
import { testAgent } from "../helpers/agent.ts";
import { waitFor } from "../helpers/index.ts";
import { drover } from "../cli/drover-cli.ts";

const agent = await testAgent("drover-identity-", { acl: { enabled: true } });
let root = "";
let allocId = "";

async function api(method: string, path: string, token: string | undefined, body?: unknown) {
  const res = await agent.fetch(path, { method, headers: token ? { "X-Nomad-Token": token } : {}, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, text: await res.text() };
}

const job = {
  ID: "wi",
  Datacenters: ["dc1"],
  Type: "service",
  TaskGroups: [
    {
      Name: "g",
      Count: 1,
      Tasks: [
        {
          Name: "t",
          Driver: "raw_exec",
          Identity: { Env: true, File: true },
          Identities: [{ Name: "vault", Audience: ["vault.io"], Env: true, File: true, TTL: 3600 * 1e9 }],
          Templates: [{ EmbeddedTmpl: '{{ with nomadVar "nomad/jobs/wi" }}{{ .greeting }}{{ end }}', DestPath: "local/greeting.txt", ChangeMode: "noop" }],
          // The task copies what it was given where the operator can read it (secrets/ is not served).
          Config: { command: "/bin/sh", args: ["-c", 'cp "$NOMAD_SECRETS_DIR/nomad_token" "$NOMAD_TASK_DIR/file"; printf %s "$NOMAD_TOKEN" > "$NOMAD_TASK_DIR/env"; cp "$NOMAD_SECRETS_DIR/nomad_vault.jwt" "$NOMAD_TASK_DIR/vault-file"; printf %s "$NOMAD_TOKEN_vault" > "$NOMAD_TASK_DIR/vault-env"; exec sleep 600'] },
          Resources: { CPU: 20, MemoryMB: 16 },
        },
      ],
    },
  ],
};

beforeAll(async () => {
  await agent.start();
  root = (JSON.parse((await api("PUT", "/v1/acl/bootstrap", undefined)).text) as { SecretID: string }).SecretID;
  expect((await api("PUT", "/v1/var/nomad/jobs/wi", root, { Items: { greeting: "hello" } })).status).toBe(200);
  expect((await api("PUT", "/v1/var/nomad/jobs/other", root, { Items: { secret: "no" } })).status).toBe(200);
  expect((await api("PUT", "/v1/jobs", root, { Job: job })).status).toBe(200);
  allocId = await waitFor("the job's alloc running", async () => {
    const allocs = JSON.parse((await api("GET", "/v1/job/wi/allocations", root)).text) as { ID: string; ClientStatus: string }[];
    return allocs.find((alloc) => alloc.ClientStatus === "running")?.ID;
  });
});

describe("workload identity, end to end", () => {
  test("a template renders its job's variable, and renders it again once it changes", async () => {
    const greeting = () => api("GET", `/v1/client/fs/cat/${allocId}?path=t/local/greeting.txt`, root);
    expect((await greeting()).text).toBe("hello");
    expect((await api("PUT", "/v1/var/nomad/jobs/wi", root, { Items: { greeting: "bonjour" } })).status).toBe(200);
    await waitFor("the changed variable rendered", async () => (await greeting()).text === "bonjour");
  });

  test("the task's token (file and env alike) verifies against /.well-known/jwks.json and reads only its own job's variables", async () => {
    const token = await waitFor("the task's copy of its token", async () => {
      const file = await api("GET", `/v1/client/fs/cat/${allocId}?path=t/local/file`, root);
      return file.status === 200 && file.text !== "" ? file.text : undefined;
    });
    expect((await api("GET", `/v1/client/fs/cat/${allocId}?path=t/local/env`, root)).text).toBe(token);

    const cli = (...argv: string[]) => drover(argv, { NOMAD_ADDR: agent.address, NOMAD_TOKEN: root });
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const { kid } = JSON.parse(Buffer.from(header, "base64url").toString()) as { kid: string };
    expect(JSON.parse(Buffer.from(payload, "base64url").toString())).toMatchObject({ nomad_job_id: "wi", nomad_allocation_id: allocId, nomad_task: "t", nomad_namespace: "default" });
    const { keys } = JSON.parse((await api("GET", "/.well-known/jwks.json", undefined)).text) as { keys: { kid: string; kty: string; crv: string; x: string }[] };
    const jwk = keys.find((key) => key.kid === kid)!;
    const publicKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: "jwk" });
    expect(verify(null, Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, "base64url"))).toBe(true);

    const own = await api("GET", "/v1/var/nomad/jobs/wi", token);
    expect(own.status).toBe(200);
    // The first test changed it from "hello".
    expect(JSON.parse(own.text)).toMatchObject({ Items: { greeting: "bonjour" } });
    expect(await api("GET", "/v1/var/nomad/jobs/other", token)).toEqual({ status: 403, text: "Permission denied" });
    expect(await api("GET", "/v1/jobs", token)).toEqual({ status: 403, text: "Permission denied" });

    // The named identity: its own token, file and env alike, with its audience and expiry, signed by the same keyring.
    // The task copies it after the default one's: wait for its last copy.
    await waitFor("the task's copy of its named token", async () => {
      const copy = await api("GET", `/v1/client/fs/cat/${allocId}?path=t/local/vault-env`, root);
      return copy.status === 200 && copy.text !== "";
    });
    const vault = (await api("GET", `/v1/client/fs/cat/${allocId}?path=t/local/vault-file`, root)).text;
    expect((await api("GET", `/v1/client/fs/cat/${allocId}?path=t/local/vault-env`, root)).text).toBe(vault);
    expect(vault).not.toBe(token);
    const [vaultHeader, vaultPayload, vaultSignature] = vault.split(".") as [string, string, string];
    const vaultClaims = JSON.parse(Buffer.from(vaultPayload, "base64url").toString()) as { aud: string; sub: string; exp: number; iat: number };
    expect(vaultClaims).toMatchObject({ aud: "vault.io", sub: "global:default:wi:g:t:vault" });
    expect(vaultClaims.exp - vaultClaims.iat).toBe(3600);
    expect(JSON.parse(Buffer.from(vaultHeader, "base64url").toString())).toMatchObject({ kid });
    expect(verify(null, Buffer.from(`${vaultHeader}.${vaultPayload}`), publicKey, Buffer.from(vaultSignature, "base64url"))).toBe(true);

    // A rotation (full: the variables move to the new key) leaves the running task's token good and its variable readable.
    const rotated = await cli("operator", "root", "keyring", "rotate", "-full", "-verbose");
    expect(rotated.code).toBe(0);
    const newKid = rotated.out.split("\n")[1]!.split(/\s+/)[0]!;
    expect(newKid).not.toBe(kid);
    expect(rotated.out).toMatch(/^Key\s+State\s+Create Time\n\S+\s+active\s+\S+\n$/);
    const listed = await cli("operator", "root", "keyring", "list", "-verbose");
    expect(listed.out).toContain(`${kid}  inactive`);
    expect(listed.out).toContain(`${newKid}  active`);
    expect((await api("GET", "/v1/var/nomad/jobs/wi", token)).status).toBe(200);
    expect(await cli("operator", "root", "keyring", "remove", newKid)).toMatchObject({ code: 1, err: expect.stringContaining("active root key cannot be deleted - call rotate first") });
    // The old key signed the running task's tokens: kept until the allocation stops.
    expect(await cli("operator", "root", "keyring", "remove", kid)).toMatchObject({ code: 1, err: expect.stringContaining("root key in use, cannot delete: it signed the workload identities of 1 running allocation") });

    expect((await api("DELETE", "/v1/job/wi", root)).status).toBe(200);
    await waitFor("the token refused once its alloc stopped", async () => (await api("GET", "/v1/var/nomad/jobs/wi", token)).text === "ACL token not found");
    expect(await cli("operator", "root", "keyring", "remove", kid)).toMatchObject({ code: 0, out: `Removed encryption key ${kid}\n` });
    expect((await cli("operator", "root", "keyring", "list", "-verbose")).out).not.toContain(kid);
  });
});
