/**
 * The CLI's environment as Nomad's: NOMAD_ADDR and friends, DROVER_* winning
 * over them, region and namespace sent with each request, and one clear line
 * when the address is some other web server.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { jobCommand } from "../../src/cli/job/index.ts";
import { nodeCommand } from "../../src/cli/node/index.ts";
import { freePort } from "../helpers/index.ts";
import { drover } from "./drover-cli.ts";
import { captureIo, startTestAgent } from "./harness.ts";

const agent = await startTestAgent();

/** A web server that is not an agent: every path answers `status` with `body` as `type`; it records each request. */
async function otherServer(status: number, body: string, type: string): Promise<{ address: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request);
    response.writeHead(status, { "Content-Type": type });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  afterAll(() => void server.close());
  return { address: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

const PAGE = "<!doctype html><html><head><title>Welcome to nginx!</title></head><body><h1>Welcome</h1></body></html>";

describe("where the CLI finds the agent", () => {
  test("NOMAD_ADDR alone reaches the agent", async () => {
    const result = await drover(["node", "status"], { NOMAD_ADDR: agent.address });
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^ID +DC +Name +Class +Drain +Eligibility +Status\n[0-9a-f]{8} +dc1 +test-node /);
  });

  test("DROVER_ADDR wins over NOMAD_ADDR; -address over both", async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    expect((await drover(["node", "status"], { DROVER_ADDR: agent.address, NOMAD_ADDR: dead })).code).toBe(0);
    const io = captureIo({ DROVER_ADDR: dead, NOMAD_ADDR: dead });
    expect(await nodeCommand(["status", "-address", agent.address], io)).toBe(0);
    const refused = await drover(["node", "status"], { NOMAD_ADDR: dead });
    expect(refused).toEqual({ code: 1, out: "", err: `drover node status: cannot reach the drover agent at ${dead}: is it running?\n` });
  });

  test("a web server that is not an agent gets one line, not its page, on errors and on success", async () => {
    for (const status of [404, 200]) {
      const other = await otherServer(status, PAGE, "text/html; charset=utf-8");
      const result = await drover(["job", "status"], { NOMAD_ADDR: other.address });
      expect(result).toEqual({
        code: 1,
        out: "",
        err: `drover job status: the server at ${other.address} is not a drover or Nomad agent: it answered ${status} with a web page (check -address or $NOMAD_ADDR)\n`,
      });
    }
  });

  test("NOMAD_REGION, NOMAD_NAMESPACE and NOMAD_TOKEN go with every request; DROVER_* and flags win", async () => {
    const other = await otherServer(200, "[]", "application/json");
    const env = { NOMAD_ADDR: other.address, NOMAD_REGION: "west", NOMAD_NAMESPACE: "team-a", NOMAD_TOKEN: "nomad-secret", DROVER_TOKEN: "drover-secret" };
    expect(await drover(["job", "status"], env)).toEqual({ code: 0, out: "No running jobs\n", err: "" });
    const first = other.requests[0]!;
    expect(first.url).toBe("/v1/jobs?region=west&namespace=team-a");
    expect(first.headers["x-nomad-token"]).toBe("drover-secret");
    const io = captureIo(env);
    expect(await jobCommand(["status", "-namespace", "team-b", "-region", "east"], io)).toBe(0);
    expect(other.requests[1]!.url).toBe("/v1/jobs?region=east&namespace=team-b");
  });

  test("a job file that names no namespace runs, plans and validates in -namespace's (or NOMAD_NAMESPACE's); one that names its own keeps it", async () => {
    for (const name of ["team-c", "team-d"]) expect((await fetch(`${agent.address}/v1/namespace/${name}`, { method: "POST", body: JSON.stringify({ Name: name }) })).status).toBe(200);
    const dir = mkdtempSync(join(tmpdir(), "drover-cli-ns-"));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const jobFile = (id: string, namespace?: string) => {
      const path = join(dir, `${id}.hcl`);
      const own = namespace ? `  namespace = "${namespace}"\n` : "";
      writeFileSync(path, `job "${id}" {\n${own}  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n`);
      return path;
    };
    const namespaceOf = async (id: string, namespace: string) => {
      const response = await fetch(`${agent.address}/v1/job/${id}?namespace=${namespace}`);
      return response.status === 200 ? ((await response.json()) as { Namespace: string }).Namespace : `${response.status}`;
    };
    const io = () => captureIo({ NOMAD_ADDR: agent.address });
    expect(await jobCommand(["run", "-detach", "-namespace", "team-c", jobFile("flagged")], io())).toBe(0);
    expect(await namespaceOf("flagged", "team-c")).toBe("team-c");
    expect(await namespaceOf("flagged", "default")).toBe("404");
    expect((await drover(["job", "run", "-detach", jobFile("from-env")], { NOMAD_ADDR: agent.address, NOMAD_NAMESPACE: "team-c" })).code).toBe(0);
    expect(await namespaceOf("from-env", "team-c")).toBe("team-c");
    expect(await jobCommand(["run", "-detach", "-namespace", "team-c", jobFile("own", "team-d")], io())).toBe(0);
    expect(await namespaceOf("own", "team-d")).toBe("team-d");
    // Planning it again in its namespace: the server knows it there, so nothing is new.
    const plan = io();
    await jobCommand(["plan", "-namespace", "team-c", jobFile("flagged")], plan);
    expect(plan.out).not.toContain("+ Job:");
    const validate = io();
    expect(await jobCommand(["validate", "-namespace", "team-c", jobFile("flagged")], validate)).toBe(0);
    // "*" is no namespace to put a job in: it stays in default, as before.
    expect(await jobCommand(["run", "-detach", "-namespace", "*", jobFile("everywhere")], io())).toBe(0);
    expect(await namespaceOf("everywhere", "default")).toBe("default");
  });

  test("NOMAD_CACERT naming a file that is not there is named", async () => {
    const result = await drover(["node", "status"], { NOMAD_ADDR: agent.address, NOMAD_CACERT: "/nonexistent/ca.pem" });
    expect(result).toEqual({ code: 1, out: "", err: "drover node status: cannot read the CA certificate /nonexistent/ca.pem: ENOENT\n" });
  });

  test("a mistyped command, subcommand or flag gets a suggestion", async () => {
    const sub = await drover(["job", "stauts"], { NOMAD_ADDR: agent.address });
    expect(sub.code).toBe(1);
    expect(sub.err).toStartWith('drover job: unknown subcommand "stauts". Did you mean "status"?\n');
    const flag = await drover(["job", "status", "-jsn"], { NOMAD_ADDR: agent.address });
    expect(flag.err).toStartWith('drover job status: flag provided but not defined: -jsn. Did you mean "-json"?\n');
  });
});
