/** The -t flag's Go templates: the subset of text/template scripts written for Nomad's CLI use. */
import { describe, expect, test } from "bun:test";
import { UsageError } from "../../src/cli/flags.ts";
import { renderTemplate } from "../../src/cli/template.ts";

const jobs = [
  { ID: "web", Status: "running", Priority: 50, Meta: { team: "a", tier: "1" }, TaskGroups: [{ Name: "g", Count: 2 }] },
  { ID: "batch", Status: "dead", Priority: 20, Meta: null, TaskGroups: [] },
];

describe("-t templates", () => {
  test("fields, range, if/else and printf as Nomad users write them", () => {
    expect(renderTemplate('{{range .}}{{.ID}} {{.Status}}{{"\\n"}}{{end}}', jobs)).toBe("web running\nbatch dead\n");
    expect(renderTemplate("{{range $i, $j := .}}{{$i}}={{$j.ID}} {{end}}", jobs)).toBe("0=web 1=batch ");
    expect(renderTemplate('{{range .}}{{if eq .Status "running"}}up{{else if gt .Priority 30}}high{{else}}down{{end}} {{end}}', jobs)).toBe("up down ");
    expect(renderTemplate('{{printf "%-6s|%3d" .ID .Priority}}', jobs[0])).toBe("web   | 50");
    expect(renderTemplate("{{(index .TaskGroups 0).Count}} {{len .TaskGroups}} {{index .Meta \"team\"}}", jobs[0])).toBe("2 1 a");
    expect(renderTemplate("{{with .Meta}}{{.tier}}{{end}}", jobs[0])).toBe("1");
    expect(renderTemplate("{{with .Meta}}x{{else}}none{{end}}", jobs[1])).toBe("none");
  });

  test("values print as Go prints them; trimming markers trim", () => {
    expect(renderTemplate("{{.Meta}} {{.TaskGroups}} {{.Missing}}", jobs[0])).toBe("map[team:a tier:1] [map[Count:2 Name:g]] <no value>");
    expect(renderTemplate("{{range .}}\n  {{- .ID -}}\n,{{end}}", jobs)).toBe("web,batch,");
    expect(renderTemplate("{{.ID | printf \"%q\"}} {{json .Meta}}", jobs[0])).toBe('"web" {"team":"a","tier":"1"}');
  });

  test("a broken template is a usage error naming the problem", () => {
    expect(() => renderTemplate("{{range .}}", jobs)).toThrow(new UsageError("template: missing {{end}} for {{range}}"));
    expect(() => renderTemplate("{{nosuch .ID}}", jobs)).toThrow(new UsageError('template: function "nosuch" not defined'));
    expect(() => renderTemplate("{{.ID", jobs)).toThrow(new UsageError("template: unclosed action at offset 0"));
  });
});
