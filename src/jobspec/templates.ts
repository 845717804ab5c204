/**
 * `${...}` in a job file's strings. HCL2 hands them over unevaluated; drover
 * keeps the references the task runner resolves when the task starts
 * (`${NOMAD_ALLOC_ID}`, any task env variable `${NAME}` (HCL2 names may hold
 * dashes, as NOMAD_UPSTREAM_ADDR_<service> does), `${env.NAME}`,
 * `${meta.key}`, `${attr.key}`, `${node.key}`) as literal text and refuses
 * the rest of HCL's expression language (functions, variables, `%{...}`
 * directives) by name, rather than passing text through that no one will
 * evaluate.
 */

const TEMPLATE = /\$\$\{|%%\{|\$\{([^}]*)\}|%\{/g;
const REFERENCE = /^\s*(?:[A-Za-z_][A-Za-z0-9_-]*|(?:env|meta|attr|node|device)(?:\.[A-Za-z0-9_\-]+)+|(?:env|meta|attr|node|device)\["[^"]+"\])\s*$/;

/** True when `value` is nothing but one `${...}` (an HCL expression where a literal was expected). */
export function isExpression(value: string): boolean {
  return /^\$\{[^}]*\}$/.test(value.trim()) && !value.startsWith("$${");
}

/**
 * `value` with HCL's escapes undone (`$${` -> `${`, `%%{` -> `%{`), or a
 * problem naming the first expression drover will not keep.
 */
export function keepReferences(value: string): { value: string } | { problem: string } {
  let problem: string | undefined;
  const out = value.replace(TEMPLATE, (match, reference: string | undefined) => {
    if (match === "$${") return "${";
    if (match === "%%{") return "%{";
    if (match === "%{") {
      problem ??= 'template directives ("%{ ... }") are not supported by drover';
      return match;
    }
    if (!REFERENCE.test(reference ?? "")) {
      problem ??=
        `the expression "${match}" is not supported by drover: only references the task runner resolves ` +
        "(${NAME}, ${NOMAD_...}, ${env.NAME}, ${meta.key}, ${attr.key}, ${node.key}) may appear in strings";
    }
    return match;
  });
  return problem === undefined ? { value: out } : { problem };
}
