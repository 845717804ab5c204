/**
 * The `-t` flag's Go templates (text/template): the shared engine in
 * src/lib/go-template.ts (the one job `template` blocks use), with Go's
 * builtins and `json`. A template error is a UsageError.
 */
import { compileTemplate, TemplateError, type TemplateFunction } from "../lib/go-template.ts";
import { UsageError } from "./flags.ts";

const FUNCS: Record<string, TemplateFunction> = {
  json: (value) => JSON.stringify(value),
};

/** Renders `template` over `data` as Go's text/template would; a template error is a UsageError. */
export function renderTemplate(template: string, data: unknown): string {
  try {
    return compileTemplate(template).render(data, FUNCS);
  } catch (err) {
    if (err instanceof TemplateError) throw new UsageError(`template: ${err.message}`);
    throw err;
  }
}
