/**
 * `${...}` in a job file's strings. HCL2 hands them over unevaluated; drover
 * keeps the references the task runner resolves when the task starts
 * (`${NOMAD_ALLOC_ID}`, any task env variable `${NAME}`, `${env.NAME}`,
 * `${meta.key}`, `${attr.key}`, `${node.key}`) as literal text and refuses
 * the rest of HCL's expression language (functions, variables, `%{...}`
 * directives) by name, rather than passing text through that no one will
 * evaluate.
 */

const TEMPLATE = /\$\$\{|%%\{|\$\{([^}]*)\}|%\{/g;
const REFERENCE = /^\s*(?:[A-Za-z_][A-Za-z0-9_]*|(?:env|meta|attr|node)(?:\.[A-Za-z0-9_\-]+)+|(?:env|meta|attr|node)\["[^"]+"\])\s*$/;
/** What a `device` block's constraints and affinities compare: the device group's identity and attributes. */
const DEVICE_REFERENCE = /^\s*device\.(?:model|vendor|type|attr\.[A-Za-z0-9_\-.]+)\s*$/;
const DEVICE_REFERENCES_HELP = "${device.model}, ${device.vendor}, ${device.type}, ${device.attr.<name>}";

/** True when `value` is nothing but one `${...}` (an HCL expression where a literal was expected). */
export function isExpression(value: string): boolean {
  return /^\$\{[^}]*\}$/.test(value.trim()) && !value.startsWith("$${");
}

/**
 * `value` with HCL's escapes undone (`$${` -> `${`, `%%{` -> `%{`), or a
 * problem naming the first expression drover will not keep.
 */
export function keepReferences(value: string, kind: "task" | "device" = "task"): { value: string } | { problem: string } {
  let problem: string | undefined;
  const out = value.replace(TEMPLATE, (match, reference: string | undefined) => {
    if (match === "$${") return "${";
    if (match === "%%{") return "%{";
    if (match === "%{") {
      problem ??= 'template directives ("%{ ... }") are not supported by drover';
      return match;
    }
    if (kind === "device" && !DEVICE_REFERENCE.test(reference ?? "")) {
      problem ??= `the expression "${match}" is not a device target: a device's constraints and affinities compare ${DEVICE_REFERENCES_HELP}`;
    } else if (kind === "task" && !REFERENCE.test(reference ?? "")) {
      problem ??=
        `the expression "${match}" is not supported by drover: only references the task runner resolves ` +
        "(${NAME}, ${NOMAD_...}, ${env.NAME}, ${meta.key}, ${attr.key}, ${node.key}) may appear in strings";
    }
    return match;
  });
  return problem === undefined ? { value: out } : { problem };
}
