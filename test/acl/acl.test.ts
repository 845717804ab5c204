import { describe, expect, test } from "bun:test";
import { Acl } from "../../src/acl/acl.ts";
import { parsePolicyRules } from "../../src/acl/policy.ts";

const compile = async (...policies: string[]) => new Acl(false, await Promise.all(policies.map((text) => parsePolicyRules("p", text))));

describe("a compiled ACL", () => {
  test("capabilities of several policies add up; deny anywhere clears the namespace", async () => {
    const acl = await compile(`namespace "default" { capabilities = ["read-logs"] }`, `namespace "default" { capabilities = ["read-fs"] }`);
    expect(acl.allowNamespaceOperation("default", "read-logs")).toBe(true);
    expect(acl.allowNamespaceOperation("default", "read-fs")).toBe(true);
    expect(acl.allowNamespaceOperation("default", "submit-job")).toBe(false);
    expect(acl.allowNamespaceOperation("other", "read-logs")).toBe(false);

    const denied = await compile(`namespace "default" { policy = "write" }`, `namespace "default" { policy = "deny" }`);
    expect(denied.allowNamespaceOperation("default", "read-job")).toBe(false);
    expect(denied.allowNamespace("default")).toBe(false);
  });

  test("an exact namespace rule wins over globs; among globs the closest", async () => {
    const acl = await compile(`namespace "*" { policy = "read" }`, `namespace "prod-*" { policy = "deny" }`, `namespace "prod-web" { policy = "write" }`);
    expect(acl.allowNamespaceOperation("default", "read-job")).toBe(true);
    expect(acl.allowNamespaceOperation("default", "submit-job")).toBe(false);
    expect(acl.allowNamespaceOperation("prod-db", "read-job")).toBe(false);
    expect(acl.allowNamespaceOperation("prod-web", "submit-job")).toBe(true);
  });

  test("scopes: write implies read, deny beats any grant, no rule allows nothing", async () => {
    const acl = await compile(`node { policy = "write" }\nagent { policy = "read" }`, `operator { policy = "write" }`, `operator { policy = "deny" }`);
    expect(acl.allowScope("node", "read")).toBe(true);
    expect(acl.allowScope("node", "write")).toBe(true);
    expect(acl.allowScope("agent", "read")).toBe(true);
    expect(acl.allowScope("agent", "write")).toBe(false);
    expect(acl.allowScope("operator", "read")).toBe(false);
    expect(acl.allowScope("quota", "read")).toBe(false);
  });

  test("plugin: read implies list", async () => {
    expect((await compile(`plugin { policy = "read" }`)).allowPlugin("list")).toBe(true);
    expect((await compile(`plugin { policy = "list" }`)).allowPlugin("read")).toBe(false);
  });

  test("variables: an exact path, then a workload's own job paths, then the closest glob; namespace policies grant none", async () => {
    const acl = await compile(
      `namespace "default" {
        policy = "write"
        variables {
          path "app/*" { capabilities = ["read"] }
          path "app/db/*" { capabilities = ["write", "list"] }
          path "app/db/root" { capabilities = ["deny"] }
        }
      }
      namespace "*" {
        variables {
          path "shared" { capabilities = ["read"] }
        }
      }`,
    );
    expect(acl.allowVariableOperation("default", "app/web", "read")).toBe(true);
    expect(acl.allowVariableOperation("default", "app/web", "list")).toBe(true);
    expect(acl.allowVariableOperation("default", "app/web", "write")).toBe(false);
    expect(acl.allowVariableOperation("default", "app/db/pass", "write")).toBe(true);
    expect(acl.allowVariableOperation("default", "app/db/pass", "read")).toBe(false);
    expect(acl.allowVariableOperation("default", "app/db/root", "read")).toBe(false);
    expect(acl.allowVariableOperation("default", "ops", "read")).toBe(false);
    expect(acl.allowVariableOperation("prod", "shared", "read")).toBe(true);

    const claim = { namespace: "default", job: "web", group: "g", task: "t" };
    for (const path of ["nomad/jobs", "nomad/jobs/web", "nomad/jobs/web/g", "nomad/jobs/web/g/t"]) {
      expect(acl.allowVariableOperation("default", path, "read", claim)).toBe(true);
      expect(acl.allowVariableOperation("default", path, "list", claim)).toBe(true);
      expect(acl.allowVariableOperation("default", path, "write", claim)).toBe(false);
    }
    expect(acl.allowVariableOperation("default", "nomad/jobs/other", "read", claim)).toBe(false);
    expect(acl.allowVariableOperation("default", "nomad/jobs/web/g/t/x", "read", claim)).toBe(false);
    expect(acl.allowVariableOperation("prod", "nomad/jobs/web", "read", claim)).toBe(false);
    expect(Acl.management.allowVariableOperation("any", "thing", "destroy")).toBe(true);
  });

  test("management allows everything", () => {
    expect(Acl.management.allowNamespaceOperation("any", "alloc-node-exec")).toBe(true);
    expect(Acl.management.allowScope("operator", "write")).toBe(true);
  });
});
