/**
 * Renders the task's templates (Nomad's template hook) with Go's template
 * language (src/lib/go-template.ts) and what a node knows:
 *
 *   prestart ──> render every template (inline `data` or a `source` file in
 *     the task dir) ──> write `destination` with `perms`; `env = true` adds
 *     its KEY=value lines to the task's environment
 *   poststart ──> re-render every TEMPLATE_RERENDER_MS; a changed output is
 *     written, and after a random wait of up to `splay` its change_mode acts:
 *     noop | restart (the task restarts, rendering again) | signal (change_signal)
 *   exited / stop ──> the re-render timer stops
 *
 * Functions: env (the task's variables, and node attributes as "attr.x",
 * "meta.x", "node.x"), file (within the task dir), nomadService and
 * nomadServices (drover's native catalog), nomadVar, nomadVarExists,
 * nomadVarList and nomadVarListSafe (Nomad 1.x's Variables, read as the
 * task's workload identity: with ACLs on, its own job's paths), and Go's and
 * consul-template's string helpers. Consul's and Vault's (key, service,
 * secret, ...) fail the task naming the function: drover has neither.
 *
 * Every render reads the variables again, so a changed variable re-renders
 * its template within TEMPLATE_RERENDER_MS and its change_mode acts. A
 * variable that does not exist renders as empty (`with` skips it).
 */
import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Template } from "../../../structs/job.ts";
import type { ServiceRegistration } from "../../../structs/service-registration.ts";
import type { Allocation } from "../../../structs/alloc.ts";
import type { VariableItems, VariableMetadata } from "../../../structs/variable.ts";
import { NS_PER_MS } from "../../../lib/units.ts";
import type { TaskEnv } from "../../taskenv/builder.ts";
import { compileTemplate, TemplateError, type TemplateFunction } from "../../../lib/go-template.ts";
import { taskEvent } from "../task-state.ts";
import { insideTaskDir } from "./artifact.ts";
import { UnrecoverableHookError, type PoststartRequest, type PrestartRequest, type PrestartResponse, type TaskHook, type TaskHookContext } from "./hook.ts";

/** How often templates are rendered again to notice a change (a service moved, a file changed). */
export const TEMPLATE_RERENDER_MS = 1_000;

/** Consul's and Vault's template functions: drover has neither. */
const UNAVAILABLE = ["key", "keyOrDefault", "ls", "tree", "service", "services", "connect", "datacenters", "node", "nodes", "secret", "secrets", "caRoots", "caLeaf", "pkiCert"];

/** Nomad's Variables functions: they need the embedded server, which keeps the variables. */
const VARIABLE_FUNCTIONS = ["nomadVar", "nomadVarExists", "nomadVarList", "nomadVarListSafe"];

/** Variables as a task's templates read them: as the task's workload identity. */
export interface TemplateVariables {
  /** The variable's items, undefined when it does not exist; throws when the task may not read it. */
  read(alloc: Allocation, task: string, path: string): Promise<VariableItems | undefined>;
  /** The variables under `prefix` the task may list. */
  list(alloc: Allocation, task: string, prefix: string): Promise<VariableMetadata[]>;
}

export interface TemplateHookDeps {
  /** The instances of a native service in `namespace` (ServiceRegistration.GetService). */
  getService(name: string, namespace: string): Promise<ServiceRegistration[]>;
  /** Variables (the embedded server's); without it the nomadVar functions fail naming why. */
  variables?: TemplateVariables;
}

/** What a render's variables functions answer from: read before it (the engine is synchronous). */
interface VariableSnapshot {
  items: Map<string, VariableItems | undefined>;
  lists: Map<string, VariableMetadata[] | Error>;
}

/** The functions a template may call, bound to the task's env and dir and a snapshot of the catalog and variables. */
function functions(env: TaskEnv, root: string, services: Map<string, ServiceRegistration[]>, variables: VariableSnapshot | undefined): Record<string, TemplateFunction> {
  const fns: Record<string, TemplateFunction> = {
    env: (name) => {
      const key = String(name);
      if (/^(attr|meta|node)\./.test(key)) {
        const value = env.interpolate(`\${${key}}`);
        return value === `\${${key}}` ? "" : value;
      }
      return env.env[key] ?? "";
    },
    file: (path) => {
      const target = `${root}/${String(path).replace(/^\/+/, "")}`;
      if (!target.startsWith(`${root}/`) || String(path).split("/").includes("..")) throw new TemplateError(`file "${String(path)}" is outside the task directory`);
      return existsSync(target) ? readFileSync(target, "utf8") : "";
    },
    nomadService: (name) => services.get(String(name)) ?? [],
    nomadServices: () => [...services].map(([Name, list]) => ({ Name, Tags: [...new Set(list.flatMap((s) => s.Tags))] })),
    toUpper: (s) => String(s).toUpperCase(),
    toLower: (s) => String(s).toLowerCase(),
    trimSpace: (s) => String(s).trim(),
    split: (sep, s) => String(s).split(String(sep)),
    join: (sep, list) => (Array.isArray(list) ? list.map(String).join(String(sep)) : String(list)),
    replaceAll: (from, to, s) => String(s).split(String(from)).join(String(to)),
    contains: (needle, s) => String(s).includes(String(needle)),
    parseInt: (s) => Number.parseInt(String(s), 10),
    parseBool: (s) => String(s) === "true",
  };
  for (const name of UNAVAILABLE) {
    fns[name] = () => {
      throw new TemplateError(`the "${name}" function needs Consul or Vault, which drover does not have`);
    };
  }
  if (variables) {
    fns.nomadVar = (path) => variables.items.get(String(path)) ?? {};
    fns.nomadVarExists = (path) => variables.items.get(String(path)) !== undefined;
    fns.nomadVarList = (prefix = "") => {
      const list = variables.lists.get(String(prefix)) ?? [];
      if (list instanceof Error) throw new TemplateError(list.message);
      return list;
    };
    // The safe form answers nothing where the list is refused, as consul-template's does.
    fns.nomadVarListSafe = (prefix = "") => {
      const list = variables.lists.get(String(prefix)) ?? [];
      return list instanceof Error ? [] : list;
    };
  } else {
    for (const name of VARIABLE_FUNCTIONS) {
      fns[name] = () => {
        throw new TemplateError(`the "${name}" function needs drover's embedded server, which keeps the variables`);
      };
    }
  }
  return fns;
}

/** The variable paths (nomadVar, nomadVarExists) and prefixes (nomadVarList, nomadVarListSafe) a source mentions. */
function variableReferences(source: string): { paths: string[]; prefixes: string[] } {
  const paths = [...source.matchAll(/nomadVar(?:Exists)?\s+"([^"]+)"/g)].map((match) => match[1]!);
  const prefixes = [...source.matchAll(/nomadVarList(?:Safe)?(?:\s+"([^"]*)")?/g)].map((match) => match[1] ?? "");
  return { paths, prefixes };
}

/** Reads what the sources mention, as the task; a refused read fails the render, as in Nomad, and a refused list only its nomadVarList. */
async function snapshotVariables(variables: TemplateVariables, ctx: TaskHookContext, sources: readonly string[]): Promise<VariableSnapshot> {
  const snapshot: VariableSnapshot = { items: new Map(), lists: new Map() };
  const refs = sources.map(variableReferences);
  for (const path of new Set(refs.flatMap((ref) => ref.paths))) {
    try {
      snapshot.items.set(path, await variables.read(ctx.alloc, ctx.task.Name, path));
    } catch (err) {
      throw new TemplateError(`nomadVar "${path}": ${(err as Error).message}`);
    }
  }
  for (const prefix of new Set(refs.flatMap((ref) => ref.prefixes))) {
    snapshot.lists.set(prefix, await variables.list(ctx.alloc, ctx.task.Name, prefix).catch((err: Error) => err));
  }
  return snapshot;
}

/** The service names a template source mentions, fetched before rendering (the engine is synchronous). */
function serviceNames(source: string): string[] {
  return [...source.matchAll(/nomadService\s+"([^"]+)"/g)].map((match) => match[1]!);
}

async function sourceOf(template: Template, root: string): Promise<string> {
  if (template.EmbeddedTmpl !== "") return template.EmbeddedTmpl;
  return readFile(await insideTaskDir(root, template.SourcePath), "utf8");
}

/** KEY=value lines (a template with env = true), as Nomad reads them. */
export function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const at = trimmed.indexOf("=");
    if (at > 0) env[trimmed.slice(0, at).trim()] = trimmed.slice(at + 1).trim().replace(/^"(.*)"$/, "$1");
  }
  return env;
}

export function templateHook(deps: TemplateHookDeps): TaskHook {
  let timer: ReturnType<typeof setInterval> | undefined;
  let rendered: string[] = [];

  const renderAll = async (ctx: TaskHookContext): Promise<string[]> => {
    const root = ctx.taskDir.root;
    const sources = await Promise.all(ctx.task.Templates.map((template) => sourceOf(template, root)));
    const services = new Map<string, ServiceRegistration[]>();
    for (const name of new Set(sources.flatMap(serviceNames))) services.set(name, await deps.getService(name, ctx.alloc.Namespace));
    const variables = deps.variables && (await snapshotVariables(deps.variables, ctx, sources));
    const fns = functions(ctx.taskEnv(), root, services, variables);
    return ctx.task.Templates.map((template, i) =>
      compileTemplate(sources[i]!, { left: template.LeftDelim, right: template.RightDelim }).render({}, fns),
    );
  };

  const write = async (ctx: TaskHookContext, template: Template, text: string) => {
    const target = await insideTaskDir(ctx.taskDir.root, template.DestPath);
    await mkdir(dirname(target), { recursive: true });
    const mode = Number.parseInt(template.Perms, 8);
    await writeFile(target, text, { mode });
    await chmod(target, mode);
  };

  const stopWatching = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };

  const rerender = async (ctx: TaskHookContext) => {
    const next = await renderAll(ctx);
    const changed = ctx.task.Templates.filter((_, i) => next[i] !== rendered[i]);
    if (changed.length === 0) return;
    for (const [i, template] of ctx.task.Templates.entries()) if (next[i] !== rendered[i]) await write(ctx, template, next[i]!);
    rendered = next;
    const restart = changed.some((t) => t.ChangeMode === "restart");
    const signals = [...new Set(changed.filter((t) => t.ChangeMode === "signal").map((t) => t.ChangeSignal))];
    if (!restart && signals.length === 0) return;
    // Splay: templates of many allocs changing at once do not restart them all at once.
    const splayMs = Math.max(...changed.map((t) => t.Splay / NS_PER_MS));
    await new Promise((done) => setTimeout(done, Math.random() * splayMs));
    if (ctx.killed.aborted) return;
    if (restart) {
      stopWatching();
      await ctx.restartTask("template with change_mode restart re-rendered", false);
    } else for (const signal of signals) await ctx.signalTask(signal, "template re-rendered");
  };

  return {
    name: "template",
    async prestart(req: PrestartRequest): Promise<PrestartResponse> {
      if (req.task.Templates.length === 0) return { done: true };
      try {
        rendered = await renderAll(req);
      } catch (err) {
        const message = `template: ${err instanceof Error ? err.message : String(err)}`;
        if (err instanceof TemplateError) throw new UnrecoverableHookError(message, taskEvent("Setup Failure", { SetupError: message, FailsTask: true }));
        throw err;
      }
      const env: Record<string, string> = {};
      for (const [i, template] of req.task.Templates.entries()) {
        await write(req, template, rendered[i]!);
        if (template.Envvars) Object.assign(env, parseEnvFile(rendered[i]!));
      }
      return { env };
    },
    async poststart(req: PoststartRequest) {
      if (req.task.Templates.length === 0) return;
      if (rendered.length === 0) rendered = await renderAll(req).catch(() => []);
      stopWatching();
      let busy = false;
      timer = setInterval(() => {
        if (busy) return;
        busy = true;
        rerender(req)
          .catch(() => undefined)
          .finally(() => (busy = false));
      }, TEMPLATE_RERENDER_MS);
    },
    async exited() {
      stopWatching();
    },
    async stop() {
      stopWatching();
    },
    async shutdown() {
      stopWatching();
    },
  };
}
