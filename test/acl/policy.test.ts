import { describe, expect, test } from "bun:test";
import { parsePolicyRules } from "../../src/acl/policy.ts";
import { ValidationError } from "../../src/lib/validation.ts";

async function problems(text: string): Promise<string[]> {
  try {
    await parsePolicyRules("p", text);
  } catch (err) {
    if (err instanceof ValidationError) return err.problems;
    throw err;
  }
  throw new Error("expected the rules to be refused");
}

describe("policy rules", () => {
  test("HCL: namespace policies expand into Nomad's capabilities, explicit ones first; scopes keep their level", async () => {
    const rules = await parsePolicyRules(
      "p",
      `namespace "default" {
        policy       = "read"
        capabilities = ["read-logs"]
      }
      namespace "ci-*" { capabilities = ["submit-job"] }
      node { policy = "write" }
      agent { policy = "read" }
      plugin { policy = "list" }`,
    );
    // The HCL parser hands labelled blocks over sorted by label.
    expect(rules.Namespaces).toEqual([
      { Name: "ci-*", Policy: "", Capabilities: ["submit-job"], Variables: null },
      {
        Name: "default",
        Policy: "read",
        Capabilities: ["read-logs", "list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume", "read-job-scaling", "list-scaling-policies", "read-scaling-policy"],
        Variables: null,
      },
    ]);
    expect(rules).toMatchObject({ Node: { Policy: "write" }, Agent: { Policy: "read" }, Plugin: { Policy: "list" }, Operator: null, Quota: null, HostVolumes: null });
  });

  test("JSON means the same as HCL", async () => {
    const json = await parsePolicyRules("p", JSON.stringify({ namespace: { default: { policy: "write" } }, operator: { policy: "read" } }));
    const hcl = await parsePolicyRules("p", `namespace "default" { policy = "write" }\noperator { policy = "read" }`);
    expect(json).toEqual(hcl);
    expect(json.Namespaces![0]!.Capabilities).toContain("alloc-exec");
    expect(json.Namespaces![0]!.Capabilities).not.toContain("alloc-node-exec");
  });

  test("each problem is named by its rule and key", async () => {
    expect(await problems(`namespace "default" { policy = "bogus" }`)).toEqual(['namespace "default": policy: expected one of "deny", "read", "write", "scale"']);
    expect(await problems(`namespace "default" { capabilities = ["fly"] }`)).toEqual([
      expect.stringContaining('namespace "default": capabilities.0: expected one of "deny", "list-jobs"'),
    ]);
    expect(await problems(`agent { policy = "scale" }\nnode {}`)).toEqual(['agent: policy: expected one of "deny", "read", "write"', "node: policy: is required"]);
    expect(await problems(`namespace "bad name" { policy = "read" }`)).toEqual(['namespace "bad name": invalid name (letters, digits, "-" and "*", at most 128)']);
    expect(await problems(`namespace "default" {\n  policy = "read"\n  colour = "red"\n}`)).toEqual(['unknown key "colour"'].map((line) => `namespace "default": ${line}`));
    expect(await problems(`jobs { policy = "read" }`)).toEqual(['unknown rule "jobs"']);
    expect(await problems(" \n")).toEqual([expect.stringContaining("no rules")]);
    expect(await problems("{")).toEqual([expect.stringContaining("malformed JSON")]);
  });

  test("empty rules are a policy that grants nothing, as Nomad stores it", async () => {
    expect(await parsePolicyRules("p", "")).toEqual({ Namespaces: null, HostVolumes: null, Agent: null, Node: null, Operator: null, Quota: null, Plugin: null });
  });

  test("a namespace's variables paths: read implies list, deny stands alone, JSON means the same", async () => {
    const hcl = `namespace "default" {
      variables {
        path "app/*" { capabilities = ["read"] }
        path "app/secret" { capabilities = ["deny", "read"] }
        path "ops" { capabilities = ["write", "destroy"] }
      }
    }`;
    const rules = await parsePolicyRules("p", hcl);
    expect(rules.Namespaces).toEqual([
      {
        Name: "default",
        Policy: "",
        Capabilities: [],
        Variables: {
          Paths: [
            { PathSpec: "app/*", Capabilities: ["read", "list"] },
            { PathSpec: "app/secret", Capabilities: ["deny"] },
            { PathSpec: "ops", Capabilities: ["write", "destroy"] },
          ],
        },
      },
    ]);
    const json = { namespace: { default: { variables: { path: { "app/*": { capabilities: ["read"] }, "app/secret": { capabilities: ["deny", "read"] }, ops: { capabilities: ["write", "destroy"] } } } } } };
    expect(await parsePolicyRules("p", JSON.stringify(json))).toEqual(rules);
  });

  test("variables problems name the namespace and path", async () => {
    expect(await problems(`namespace "default" {
 variables {}
}`)).toEqual([expect.stringContaining('namespace "default": variables: no variable paths')]);
    expect(await problems(`namespace "default" {
 variables {
 path "a" { capabilities = ["fly"] }
 }
}`)).toEqual([
      'namespace "default": variables: path "a": capabilities.0: expected one of "list", "read", "write", "destroy", "deny"',
    ]);
  });

  test("an HCL syntax error names its line", async () => {
    await expect(parsePolicyRules("p.hcl", `namespace "default" {\n  policy = \n}`)).rejects.toThrow(/p\.hcl:2,12/);
  });
});
