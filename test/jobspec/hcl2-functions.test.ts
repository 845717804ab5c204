/**
 * Nomad's function set, each checked against the result cty (and
 * go-cty-funcs) gives for the examples of their documentation.
 */
import { describe, expect, test } from "bun:test";
import { evaluate, type Scope } from "../../src/jobspec/hcl2/expressions.ts";
import { hclFunctions } from "../../src/jobspec/hcl2/functions/index.ts";
import { parseExpression } from "../../src/jobspec/hcl2/syntax.ts";
import type { Value } from "../../src/jobspec/hcl2/values.ts";

const scope: Scope = { names: new Map(), functions: hclFunctions({ baseDir: ".", allowFs: false }), keepUnknown: false };
const run = (text: string): Value => evaluate(parseExpression(text), scope);

const CASES: Record<string, [string, Value][]> = {
  strings: [
    ['format("Hello, %s!", "Ander")', "Hello, Ander!"],
    ['format("There are %d lights", 4)', "There are 4 lights"],
    ['format("%-5s|%5s|", "ab", "cd")', "ab   |   cd|"],
    ['format("%05.2f %q %t %x %%", 3.14159, "x", true, 255)', '03.14 "x" true ff %'],
    ['format("%[2]s %[1]s", "a", "b")', "b a"],
    ['formatlist("Hello, %s!", ["Valentina", "Ander"])', ["Hello, Valentina!", "Hello, Ander!"]],
    ['join(", ", ["foo", "bar"], ["baz"])', "foo, bar, baz"],
    ['split(",", "foo,bar")', ["foo", "bar"]],
    ['chomp("hello\\n\\n")', "hello"],
    ['indent(2, "a\\nb")', "a\n  b"],
    ['substr("hello world", 1, 4)', "ello"],
    ['substr("hello", -3, -1)', "llo"],
    ['title("hello world")', "Hello World"],
    ['trim("?!hello?!", "!?")', "hello"],
    ['trimprefix("helloworld", "hello")', "world"],
    ['trimsuffix("helloworld", "world")', "hello"],
    ['trimspace("  hello\\n")', "hello"],
    ['regex_replace("hello", "l+", "L")', "heLo"],
    ['regex_replace("a-b", "(\\\\w)-(\\\\w)", "$2-$1")', "b-a"],
    ['replace("1 + 2 + 3", "+", "-")', "1 - 2 - 3"],
    ['strrev("hello")', "olleh"],
    ['strlen("héllo")', 5],
    ['upper("a") == "A" && lower("B") == "b"', true],
  ],
  collections: [
    ['chunklist(["a", "b", "c"], 2)', [["a", "b"], ["c"]]],
    ['coalesce("", "b")', "b"],
    ['coalescelist([], ["x"])', ["x"]],
    ['compact(["a", "", "b"])', ["a", "b"]],
    ['concat(["a"], ["b", "c"])', ["a", "b", "c"]],
    ['contains(["a", "b"], "b")', true],
    ['distinct(["a", "b", "a"])', ["a", "b"]],
    ['element(["a", "b"], 3)', "b"],
    ['flatten([["a"], [], ["b", ["c"]]])', ["a", "b", "c"]],
    ['index(["a", "b"], "b")', 1],
    ["keys({ b = 1, a = 2 })", ["a", "b"]],
    ["values({ b = 1, a = 2 })", [2, 1]],
    ['length("héllo") + length([1, 2]) + length({ a = 1 })', 8],
    ['lookup({ a = "x" }, "b", "d")', "d"],
    ["merge({ a = 1 }, { b = 2 }, { a = 3 })", { a: 3, b: 2 }],
    ["range(3)", [0, 1, 2]],
    ["range(4, 1)", [4, 3, 2]],
    ["range(0, 10, 5)", [0, 5]],
    ['reverse(["a", "b"])', ["b", "a"]],
    ['setintersection(["a", "b"], ["b", "c"])', ["b"]],
    ['setunion(["a"], ["b", "a"])', ["a", "b"]],
    ['setproduct(["a", "b"], [1])', [["a", 1], ["b", 1]]],
    ['slice(["a", "b", "c"], 1, 2)', ["b"]],
    ['sort(["c", "a", "b"])', ["a", "b", "c"]],
    ['zipmap(["a", "b"], [1, 2])', { a: 1, b: 2 }],
  ],
  numbers: [
    ["abs(-1.5)", 1.5],
    ["ceil(1.2) + floor(1.8)", 3],
    ["log(8, 2)", 3],
    ["max(1, 5, 3) - min(4, 2)", 3],
    ['parseint("ff", 16) + parseint("-10", 2)', 253],
    ["pow(2, 10)", 1024],
    ["signum(-3)", -1],
  ],
  encoding: [
    ['base64encode("hi")', "aGk="],
    ['base64decode("aGk=")', "hi"],
    ['urlencode("a b&c=d/é")', "a+b%26c%3Dd%2F%C3%A9"],
    ['jsonencode({ b = [1, true, null], a = "x", c = 1.5 })', '{"a":"x","b":[1,true,null],"c":1.5}'],
    ['jsondecode("{\\"a\\": [1, \\"x\\"]}")', { a: [1, "x"] }],
    ['csvdecode("a,b\\n1,\\"x,y\\"\\n")', [{ a: "1", b: "x,y" }]],
    ['yamlencode({ a = 1, b = ["x", { c = "y" }], d = {} })', "a: 1\nb:\n- x\n- c: \"y\"\nd: {}\n"],
    ['yamldecode("a: 1\\nb:\\n  - x\\n  - c: y\\nd: |\\n  line\\n")', { a: 1, b: ["x", { c: "y" }], d: "line\n" }],
  ],
  datetime: [
    ['formatdate("DD MMM YYYY hh:mm ZZZ", "2018-01-02T23:12:01Z")', "02 Jan 2018 23:12 UTC"],
    ['formatdate("EEE, DD MMM YYYY hh:mm:ss ZZZ", "2018-01-02T23:12:01-08:00")', "Tue, 02 Jan 2018 23:12:01 -0800"],
    ["formatdate(\"h:mm'h' AA\", \"2018-01-02T15:04:05Z\")", "15:04h PM"],
    ['timeadd("2017-11-22T00:00:00Z", "10m")', "2017-11-22T00:10:00Z"],
    ['timeadd("2017-11-22T00:00:00+02:00", "-1h30m")', "2017-11-21T22:30:00+02:00"],
  ],
  crypto: [
    ['md5("hello world")', "5eb63bbbe01eeed093cb22bb8f5acdc3"],
    ['sha1("hello world")', "2aae6c35c94fcfb415dbe95f408b9ce91ee846ed"],
    ['sha256("hello world")', "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"],
    ['uuidv5("dns", "www.terraform.io")', "a5008fae-b28c-5ba5-96cd-82b4c53552d6"],
    ['uuidv5("url", "https://www.terraform.io/")', "9db6f67c-dd95-5ea0-aa5b-e70e5c5f7cf5"],
    ["length(uuidv4())", 36],
  ],
  cidr: [
    ['cidrhost("10.12.112.0/20", 16)', "10.12.112.16"],
    ['cidrhost("10.12.112.0/20", 268)', "10.12.113.12"],
    ['cidrhost("fd00:fd12:3456:7890:00a2::/72", 34)', "fd00:fd12:3456:7890::22"],
    ['cidrnetmask("172.16.0.0/12")', "255.240.0.0"],
    ['cidrsubnet("172.16.0.0/12", 4, 2)', "172.18.0.0/16"],
    ['cidrsubnet("10.1.2.0/24", 4, 15)', "10.1.2.240/28"],
    ['cidrsubnet("fd00:fd12:3456:7890::/56", 16, 162)', "fd00:fd12:3456:7800:a200::/72"],
    ['cidrsubnets("10.1.0.0/16", 4, 4, 8, 4)', ["10.1.0.0/20", "10.1.16.0/20", "10.1.32.0/24", "10.1.48.0/20"]],
  ],
  "try, can, convert": [
    ['try(jsondecode("nope"), "fallback")', "fallback"],
    ['can(jsondecode("{}"))', true],
    ['can(parseint("x", 10))', false],
    ['convert(["b", "a", "b"], set(string))', ["b", "a"]],
    ["convert({ a = 1 }, map(string))", { a: "1" }],
  ],
  expressions: [
    ['[for i, s in ["a", "b"] : "${i}${s}" if s != "x"]', ["0a", "1b"]],
    ['{ for s in ["a", "bb", "cc"] : length(s) => s... }', { "1": ["a"], "2": ["bb", "cc"] }],
    ["[{ a = 1 }, { a = 2 }][*].a", [1, 2]],
    ['"x ${~ "y" ~} z"', "xyz"],
    ['"%{ for k, v in { a = 1, b = 2 } }${k}=${v} %{ endfor }"', "a=1 b=2 "],
    ['1 + 2 * 3 == 7 ? "yes" : "no"', "yes"],
    ["!(1 >= 2) || false", true],
    ['-(2 - 5) % 2', 1],
    ['{ "a.b" = 1, c: 2 }["a.b"]', 1],
    ['["a", "b"].1', "b"],
    ["max([1, 5, 3]...)", 5],
  ],
};

for (const [group, cases] of Object.entries(CASES)) {
  describe(group, () => {
    for (const [text, expected] of cases) test(text, () => expect(run(text)).toEqual(expected));
  });
}

describe("errors name the function and the problem", () => {
  const ERRORS: [string, RegExp][] = [
    ["nope(1)", /there is no function named "nope"/],
    ['upper("a", "b")', /^upper\(\): takes 1 argument\(s\), got 2$/],
    ['element([], 0)', /^element\(\): cannot use element\(\) on an empty list$/],
    ['file("x")', /^file\(\): filesystem functions are disabled here/],
    ['bcrypt("x")', /^bcrypt\(\): bcrypt is not available/],
    ['"x${[1]}"', /a template cannot insert a tuple/],
    ["var.x", /unknown variable "var"/],
  ];
  for (const [text, message] of ERRORS) test(text, () => expect(() => run(text)).toThrow(message));
});
