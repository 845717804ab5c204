import { expect, test } from "bun:test";
import { compileTemplate, TemplateError } from "../../src/lib/go-template.ts";

const fns = {
  env: (name: unknown) => ({ A: "1", NOMAD_PORT_http: "8080" })[String(name) as "A"] ?? "",
  nomadService: () => [
    { Address: "10.0.0.1", Port: 1 },
    { Address: "10.0.0.2", Port: 2 },
  ],
  toUpper: (s: unknown) => String(s).toUpperCase(),
};
const render = (source: string, delimiters?: { left: string; right: string }) => compileTemplate(source, delimiters).render({}, fns);

test("Nomad's template forms: functions, pipes, range with variables, if/else if, with, trimming, comments", () => {
  expect(render('port={{ env "NOMAD_PORT_http" }}')).toBe("port=8080");
  expect(render('{{- range $i, $s := nomadService "web" }}\n{{ $i }}={{ .Address }}:{{ $s.Port }}{{ end }}')).toBe("\n0=10.0.0.1:1\n1=10.0.0.2:2");
  expect(render('{{ if eq (env "A") "2" }}two{{ else if eq (env "A") "1" }}one{{ else }}none{{ end }}')).toBe("one");
  expect(render('{{ with env "MISSING" }}set{{ else }}unset{{ end }} {{ "x" | toUpper }} {{ printf "%s-%03d" "a" 7 }}')).toBe("unset X a-007");
  expect(render('{{ printf "%.3s|%-5.2s|" "abcdef" "xyz" }}')).toBe("abc|xy   |");
  expect(render("a  {{- /* note */ -}}  b {{ $v := 3 }}{{ $v }} {{ len (nomadService) }}")).toBe("ab 3 2");
  expect(render('[[ env "A" ]]', { left: "[[", right: "]]" })).toBe("1");
});

test("mistakes are TemplateErrors naming them", () => {
  expect(() => render('{{ key "x" }}')).toThrow(TemplateError);
  expect(() => render("{{ if true }}x")).toThrow(/missing \{\{end\}\}/);
  expect(() => render("{{ $nope }}")).toThrow(/undefined variable "\$nope"/);
});
