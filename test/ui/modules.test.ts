/**
 * The UI's own logic that needs no browser: its URLs (Nomad's UI's), the
 * log stream's frame splitting, what a token's policies allow, and the exec
 * command line's splitting.
 */
import { describe, expect, test } from "bun:test";
import { accessIn, can, grantsOf } from "../../src/ui/acl/capabilities.ts";
import { FrameSplitter } from "../../src/ui/api/log-stream.ts";
import { AclPolicySchema } from "../../src/ui/api/shapes.ts";
import { splitCommand } from "../../src/ui/components/exec-terminal.tsx";
import { parseRoute, paths } from "../../src/ui/router.ts";
import * as v from "valibot";

describe("routes", () => {
  test("Nomad's UI URLs map to pages, and back", () => {
    expect(parseRoute("/ui/")).toEqual({ page: "jobs", namespace: "default" });
    expect(parseRoute("/ui/jobs")).toEqual({ page: "jobs", namespace: "default" });
    expect(parseRoute("/ui/jobs/web%2Fa")).toEqual({ page: "job", id: "web/a", namespace: "default" });
    expect(parseRoute("/ui/allocations/abc")).toEqual({ page: "allocation", id: "abc" });
    expect(parseRoute("/ui/clients")).toEqual({ page: "clients" });
    expect(parseRoute("/ui/clients/n1/")).toEqual({ page: "client", id: "n1" });
    expect(parseRoute("/ui/settings/tokens")).toEqual({ page: "token" });
    expect(parseRoute("/ui/jobs/web/extra")).toEqual({ page: "not-found", path: "/ui/jobs/web/extra" });
    // Nomad's subpages land on the page that shows them.
    expect(parseRoute("/ui/jobs/web/allocations")).toEqual({ page: "job", id: "web", namespace: "default" });
    expect(parseRoute("/ui/allocations/abc/server/logs")).toEqual({ page: "allocation", id: "abc" });
    expect(parseRoute("/ui/clients/n1/monitor")).toEqual({ page: "client", id: "n1" });
    // Namespaces: the list's in ?namespace= ("*": all), a job's as Nomad 1.x's job@namespace or an older Nomad's ?namespace=.
    expect(parseRoute("/ui/jobs", "?namespace=team-a")).toEqual({ page: "jobs", namespace: "team-a" });
    expect(parseRoute("/ui/jobs", "?namespace=*")).toEqual({ page: "jobs", namespace: "*" });
    expect(parseRoute("/ui/jobs/web@default")).toEqual({ page: "job", id: "web", namespace: "default" });
    expect(parseRoute("/ui/jobs/web@team-a/allocations")).toEqual({ page: "job", id: "web", namespace: "team-a" });
    expect(parseRoute("/ui/jobs/web", "?namespace=team-a")).toEqual({ page: "job", id: "web", namespace: "team-a" });
    expect(parseRoute("/ui/jobs/a%40b@team-a")).toEqual({ page: "job", id: "a@b", namespace: "team-a" });
    for (const namespace of ["default", "team-a", "*"]) {
      const [path, search = ""] = paths.jobs(namespace).split("?");
      expect(parseRoute(path!, search)).toEqual({ page: "jobs", namespace });
    }
    expect(paths.jobs()).toBe("/ui/jobs");
    for (const id of ["web", "a b", "x/y", "a@b"]) {
      expect(parseRoute(paths.job(id))).toEqual({ page: "job", id, namespace: "default" });
      expect(parseRoute(paths.job(id, "team-a"))).toEqual({ page: "job", id, namespace: "team-a" });
    }
  });
});

describe("log frames", () => {
  test("back-to-back JSON objects split wherever the chunks break, heartbeats and braces in strings included", () => {
    const frames = [{ Offset: 5, Data: "aGVsbG8=", File: "alloc/logs/t.stdout.0" }, {}, { FileEvent: "file truncated", File: "we{ird}.log" }];
    const text = frames.map((frame) => JSON.stringify(frame)).join("\n");
    for (const size of [1, 3, 7, text.length]) {
      const splitter = new FrameSplitter();
      const out = [];
      for (let i = 0; i < text.length; i += size) out.push(...splitter.push(text.slice(i, i + size)));
      expect(out).toEqual(frames);
    }
  });
});

describe("capabilities from policies", () => {
  const policy = (rules: unknown) => v.parse(AclPolicySchema, { Name: "p", Rules: "", RulesJSON: rules });

  test("namespace read gives reading only; write adds logs, exec and lifecycle; node and agent levels", () => {
    expect(grantsOf([policy({ Namespaces: [{ Name: "default", Policy: "read" }], Node: { Policy: "read" } })])).toEqual({
      "list-jobs": true,
      "read-job": true,
      "submit-job": false,
      "read-logs": false,
      "read-fs": false,
      "alloc-exec": false,
      "alloc-lifecycle": false,
      "node:read": true,
      "node:write": false,
      "agent:read": false,
      "agent:write": false,
    });
    const write = grantsOf([policy({ Namespaces: [{ Name: "*", Policy: "write" }], Agent: { Policy: "write" } })]);
    expect(write["alloc-exec"]).toBe(true);
    expect(write["agent:read"]).toBe(true);
  });

  test("fine-grained capabilities add up across policies; an exact namespace rule wins over a glob; deny wins", () => {
    const grants = grantsOf([
      policy({ Namespaces: [{ Name: "default", Capabilities: ["read-job", "read-logs"] }, { Name: "*", Policy: "write" }] }),
      policy({ Namespaces: [{ Name: "default", Capabilities: ["alloc-exec"] }] }),
    ]);
    expect([grants["read-logs"], grants["alloc-exec"], grants["submit-job"]]).toEqual([true, true, false]);
    const denied = grantsOf([policy({ Namespaces: [{ Name: "default", Policy: "write" }], Node: { Policy: "write" } }), policy({ Namespaces: [{ Name: "default", Policy: "deny" }], Node: { Policy: "deny" } })]);
    expect([denied["read-job"], denied["node:read"]]).toEqual([false, false]);
  });

  test("another namespace is judged by its own rules: exact, then glob", () => {
    const policies = [policy({ Namespaces: [{ Name: "team-a", Policy: "write" }, { Name: "team-*", Policy: "read" }] })];
    expect(grantsOf(policies)["list-jobs"]).toBe(false);
    expect([grantsOf(policies, "team-a")["submit-job"], grantsOf(policies, "team-b")["submit-job"], grantsOf(policies, "team-b")["read-job"]]).toEqual([true, false, true]);
    const client = { mode: "client" as const, token: undefined, note: undefined, granted: grantsOf(policies), policies: { read: policies, unreadable: [] } };
    expect(can(accessIn(client, "team-a"), "submit-job")).toBe(true);
    expect(can(accessIn(client, "default"), "read-job")).toBe(false);
  });
});

test("an exec command line splits on blanks, quotes keep an argument whole", () => {
  expect(splitCommand("/bin/sh")).toEqual(["/bin/sh"]);
  expect(splitCommand(`sh -c "echo hi there" 'a b'`)).toEqual(["sh", "-c", "echo hi there", "a b"]);
  expect(splitCommand("   ")).toEqual([]);
});
