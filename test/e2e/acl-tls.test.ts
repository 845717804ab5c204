/**
 * The compiled agent with ACLs on and its API over TLS: a token holder gets
 * in (drover's CLI and Nomad's own, with NOMAD_TOKEN and NOMAD_CACERT), no
 * one else does; exec and the alloc dir need their own capabilities (exec
 * into raw_exec alloc-node-exec too); renewed certificates are served after
 * a SIGHUP.
 */
import { beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:tls";
import { join } from "node:path";
import { testAgent } from "../helpers/agent.ts";
import { tempDir, waitFor } from "../helpers/index.ts";
import { field, NOMAD_BINARY, nomadMissing, nomadWith } from "../helpers/nomad.ts";
import { makeTestCerts, opensslMissing } from "../helpers/tls.ts";

if (opensslMissing) console.warn(`skipping the ACL and TLS end-to-end tests: ${opensslMissing}`);
const certs = opensslMissing ? null : makeTestCerts();
const agent = certs ? await testAgent("drover-acl-tls-", { acl: { enabled: true } }, {}, undefined, { certs }) : null;
const dir = tempDir("drover-acl-tls-files-");

let root = "";
const secrets: Record<string, string> = {};
let allocId = "";

async function api(method: string, path: string, token: string | undefined, body?: unknown) {
  const res = await agent!.fetch(path, { method, headers: token ? { "X-Nomad-Token": token } : {}, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: res.status, text: await res.text() };
}

async function tokenWith(name: string, rules: string): Promise<string> {
  expect((await api("PUT", `/v1/acl/policy/${name}`, root, { Name: name, Rules: rules })).status).toBe(200);
  const made = await api("PUT", "/v1/acl/token", root, { Name: name, Type: "client", Policies: [name] });
  return (JSON.parse(made.text) as { SecretID: string }).SecretID;
}

/** The serial number of the certificate the agent serves now, trusting `ca`. */
function servedSerial(port: number, ca = certs!.ca): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: "127.0.0.1", port, ca: readFileSync(ca) }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on("error", reject);
  });
}

beforeAll(async () => {
  if (!agent) return;
  await agent.start();
  root = (JSON.parse((await api("PUT", "/v1/acl/bootstrap", undefined)).text) as { SecretID: string }).SecretID;
  secrets.ops = await tokenWith("ops", `namespace "default" {\n  policy = "write"\n}\nnode { policy = "read" }\nagent { policy = "read" }\n`);
  secrets.nodeExec = await tokenWith("node-exec", `namespace "default" {\n  policy = "write"\n  capabilities = ["alloc-node-exec"]\n}\nnode { policy = "read" }\n`);
  secrets.reader = await tokenWith("reader", `namespace "default" {\n  policy = "read"\n}\n`);
  const jobPath = join(dir, "hello.nomad");
  writeFileSync(
    jobPath,
    `job "hello" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello-from-task; echo kept > $NOMAD_TASK_DIR/file.txt; exec sleep 600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`,
  );
  agent.token = secrets.ops;
  const run = await agent.cli("job", "run", "-detach", jobPath);
  expect(run.stderr).toBe("");
  allocId = await waitFor("the job's alloc running", async () => {
    const allocs = await agent.get<{ ID: string; ClientStatus: string }[]>("/v1/job/hello/allocations");
    return allocs.find((alloc) => alloc.ClientStatus === "running")?.ID;
  });
  await waitFor("the task's output", async () => (await api("GET", `/v1/client/fs/cat/${allocId}?path=alloc/logs/t.stdout.0`, secrets.ops)).text.includes("hello-from-task"));
  agent.token = undefined;
});

describe.skipIf(agent === null)("ACLs and TLS, end to end", () => {
  test("without a token, or with an unknown one, nothing but health answers", async () => {
    expect(await api("GET", "/v1/jobs", undefined)).toEqual({ status: 403, text: "Permission denied" });
    expect(await api("GET", "/v1/jobs", "11111111-2222-3333-4444-555555555555")).toEqual({ status: 403, text: "ACL token not found" });
    expect((await api("GET", "/v1/agent/health", undefined)).status).toBe(200);
    const status = await agent!.cli("job", "status");
    expect(status).toMatchObject({ code: 1, stderr: "drover job status: Permission denied\n" });
    // The applied config says so, to a token that may read the agent.
    const self = JSON.parse((await api("GET", "/v1/agent/self", secrets.ops)).text) as { config: { ACL: { Enabled: boolean }; TLSConfig: { EnableHTTP: boolean } } };
    expect(self.config).toMatchObject({ ACL: { Enabled: true }, TLSConfig: { EnableHTTP: true } });
  });

  test("exec and the alloc dir need their capabilities; exec into raw_exec also alloc-node-exec", async () => {
    const exec = (token: string) => api("POST", `/v1/client/allocation/${allocId}/exec`, token, { Cmd: ["/bin/echo", "inside"] });
    expect(await exec(secrets.reader!)).toEqual({ status: 403, text: "Permission denied" });
    expect(await exec(secrets.ops!)).toEqual({ status: 403, text: "Permission denied" });
    expect(JSON.parse((await exec(secrets.nodeExec!)).text)).toMatchObject({ Stdout: "inside\n", ExitCode: 0 });

    expect(await api("GET", `/v1/client/fs/cat/${allocId}?path=t/local/file.txt`, secrets.reader)).toEqual({ status: 403, text: "Permission denied" });
    expect(await api("GET", `/v1/client/fs/ls/${allocId}?path=/`, secrets.reader)).toEqual({ status: 403, text: "Permission denied" });
    expect(await api("GET", `/v1/client/fs/logs/${allocId}?task=t&type=stdout&plain=true`, secrets.reader)).toEqual({ status: 403, text: "Permission denied" });
    expect((await api("GET", `/v1/client/fs/cat/${allocId}?path=t/local/file.txt`, secrets.ops)).text).toBe("kept\n");
    // What read allows, it allows.
    expect((await api("GET", `/v1/allocation/${allocId}`, secrets.reader)).status).toBe(200);
  });

  test.skipIf(NOMAD_BINARY === null)("Nomad's CLI with NOMAD_TOKEN and NOMAD_CACERT: a token holder gets in, no one else", async () => {
    const as = (token: string | undefined, ...args: string[]) => nomadWith({ NOMAD_CACERT: certs!.ca, ...(token ? { NOMAD_TOKEN: token } : {}) }, agent!.address, ...args);
    const status = await as(secrets.ops, "job", "status", "hello");
    expect(status.code).toBe(0);
    expect(field(status.stdout, "Status")).toBe("running");
    // Logs and files go to the node directly, over https as client.global.nomad.
    expect((await as(secrets.ops, "alloc", "logs", allocId, "t")).stdout).toContain("hello-from-task");
    expect((await as(secrets.ops, "alloc", "fs", allocId, "t/local/file.txt")).stdout).toBe("kept\n");
    expect((await as(secrets.nodeExec, "alloc", "exec", "-i=false", "-t=false", allocId, "/bin/echo", "via-nomad")).stdout).toBe("via-nomad\n");
    expect(field((await as(secrets.ops, "acl", "token", "self")).stdout, "Name")).toBe("ops");

    // Nomad's own acl commands, with the management token.
    const rules = join(dir, "viewer.hcl");
    writeFileSync(rules, `namespace "default" {\n  policy = "read"\n}\n`);
    expect((await as(root, "acl", "policy", "apply", "-description", "views", "viewer", rules)).stdout).toContain('Successfully wrote "viewer" ACL policy!');
    expect((await as(root, "acl", "policy", "list")).stdout).toMatch(/viewer\s+views/);
    expect((await as(root, "acl", "policy", "info", "viewer")).stdout).toContain('policy = "read"');
    const created = await as(root, "acl", "token", "create", "-name", "viewer", "-policy", "viewer");
    const accessor = field(created.stdout, "Accessor ID")!;
    const viewerSecret = field(created.stdout, "Secret ID")!;
    expect(field((await as(viewerSecret, "acl", "token", "info", accessor)).stdout, "Name")).toBe("viewer");
    expect((await as(root, "acl", "token", "list")).stdout).toContain(accessor);
    expect((await as(root, "acl", "token", "delete", accessor)).code).toBe(0);
    expect((await as(viewerSecret, "job", "status")).stderr).toContain("ACL token not found");
    expect((await as(undefined, "acl", "bootstrap")).stderr).toContain("ACL bootstrap already done");

    const anonymous = await as(undefined, "job", "status");
    expect(anonymous.code).toBe(1);
    expect(anonymous.stderr).toContain("403 (Permission denied)");
    const reader = await as(secrets.reader, "alloc", "exec", "-i=false", "-t=false", allocId, "/bin/echo", "no");
    expect(reader.code).not.toBe(0);
    expect(reader.stderr).toContain("Permission denied");
    const untrusted = await nomadWith({ NOMAD_TOKEN: secrets.ops! }, agent!.address, "job", "status");
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/certificate/);
  });
  if (NOMAD_BINARY === null) test.skip(`Nomad's CLI against ACLs and TLS (${nomadMissing})`, () => {});

  test("a websocket exec with Nomad's handshake frame: the frame's token is judged", async () => {
    /** Opens the exec websocket without a token in its headers, sends the handshake, and collects stdout and the close. */
    const session = (token: string) =>
      new Promise<{ stdout: string; code: number; reason: string }>((resolve) => {
        const query = new URLSearchParams({ command: JSON.stringify(["/bin/echo", "over-ws"]), task: "t", ws_handshake: "true" });
        const socket = new WebSocket(`${agent!.address.replace("https", "wss")}/v1/client/allocation/${allocId}/exec?${query}`, { tls: { ca: readFileSync(certs!.ca, "utf8") } });
        let stdout = "";
        socket.addEventListener("open", () => socket.send(JSON.stringify({ version: 1, auth_token: token })));
        socket.addEventListener("message", (event) => {
          const frame = JSON.parse(String(event.data)) as { stdout?: { data?: string } };
          if (frame.stdout?.data) stdout += Buffer.from(frame.stdout.data, "base64").toString();
        });
        socket.addEventListener("close", (event) => resolve({ stdout, code: event.code, reason: event.reason }));
      });
    expect(await session(secrets.nodeExec!)).toMatchObject({ stdout: "over-ws\n", code: 1000 });
    expect(await session(secrets.reader!)).toEqual({ stdout: "", code: 1008, reason: "Permission denied" });
    expect(await session(secrets.ops!)).toEqual({ stdout: "", code: 1008, reason: "Permission denied" });
    expect(await session("11111111-2222-3333-4444-555555555555")).toEqual({ stdout: "", code: 1008, reason: "ACL token not found" });
  });

  test("renewed certificates are served after a SIGHUP, on the same address; unreadable ones keep the old", async () => {
    const port = Number(new URL(agent!.address).port);
    const before = await servedSerial(port);
    const renewed = makeTestCerts();
    // The same CA's certificate would do too; a new CA shows the swap beyond doubt once trusted.
    copyFileSync(renewed.serverCert, certs!.serverCert);
    copyFileSync(renewed.serverKey, certs!.serverKey);
    agent!.process.kill("SIGHUP");
    const after = await waitFor("the renewed certificate served", () =>
      new Promise<string | null>((resolve) => {
        const socket = connect({ host: "127.0.0.1", port, ca: readFileSync(renewed.ca) }, () => {
          resolve(socket.getPeerCertificate().serialNumber);
          socket.end();
        });
        socket.on("error", () => resolve(null));
      }),
    );
    expect(after).not.toBe(before);
    const health = () => fetch(`${agent!.address}/v1/agent/health`, { tls: { ca: readFileSync(renewed.ca, "utf8") } }).then((res) => res.status);
    expect(await health()).toBe(200);

    writeFileSync(certs!.serverKey, "not a key");
    agent!.process.kill("SIGHUP");
    await waitFor("the failed reload logged", () => readFileSync(join(agent!.dir, "agent-0.log"), "utf8").includes("TLS reload failed"));
    expect(await servedSerial(port, renewed.ca)).toBe(after);
    expect(await health()).toBe(200);
  });
});
