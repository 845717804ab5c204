/**
 * A task's environment, as Nomad builds it, and `${...}` interpolation over it.
 *
 * Layering, later wins:
 *   host env (filtered)  <  NOMAD_* variables  <  the task's `env` block
 * except that host variables never replace a NOMAD_* one. Values in the `env`
 * block and in driver config are interpolated; the task runner resolves them,
 * never a shell.
 *
 * Interpolation keys: any variable of the task env (`${NOMAD_ALLOC_ID}`,
 * `${HOME}`), `${env.X}` / `${env["X"]}`, `${attr.<node attribute>}`,
 * `${meta.<node meta>}`, `${node.unique.id}`, `${node.unique.name}`,
 * `${node.datacenter}`, `${node.region}`, `${node.class}`. An unknown key is
 * left as written, as Nomad does.
 */

export interface TaskPort {
  Label: string;
  /** The port on the host. */
  Value: number;
  /** The port the task binds when mapped; 0 for none. */
  To: number;
  HostIP: string;
}

export interface TaskEnvInput {
  alloc: { id: string; name: string; index: number; group: string; namespace: string };
  job: { id: string; name: string; parentId?: string };
  task: { name: string; env: Record<string, string>; cpuMhz: number; memoryMb: number; memoryMaxMb: number };
  /** Job, group and task meta merged (task wins). */
  meta: Record<string, string>;
  ports: readonly TaskPort[];
  /** Directories as the task sees them (host paths for raw_exec, /alloc... in a chroot). */
  dirs: { alloc: string; local: string; secrets: string };
  node: {
    id: string;
    name: string;
    nodeClass: string;
    datacenter: string;
    region: string;
    attributes: Record<string, string>;
    meta: Record<string, string>;
  };
  hostEnv: Record<string, string>;
}

/**
 * Host variables Nomad keeps out of tasks by default (client option
 * `env.blacklist`): credentials of the agent, not of the task.
 */
export const DEFAULT_HOST_ENV_DENYLIST = [
  "CONSUL_TOKEN",
  "CONSUL_HTTP_TOKEN",
  "VAULT_TOKEN",
  "NOMAD_LICENSE",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "AWS_SESSION_TOKEN",
  "GOOGLE_APPLICATION_CREDENTIALS",
] as const;

/**
 * The agent's environment as tasks inherit it: without the denylist, and
 * without NOMAD_* variables, which would otherwise pose as this task's own.
 */
export function filterHostEnv(env: Readonly<Record<string, string | undefined>>, denylist: readonly string[] = DEFAULT_HOST_ENV_DENYLIST): Record<string, string> {
  const denied = new Set(denylist);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !denied.has(name) && !name.startsWith("NOMAD_")) out[name] = value;
  }
  return out;
}

/** Nomad's cleaning of generated names: anything but [A-Za-z0-9_] becomes "_". */
function cleanName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_");
}

function hostPort(ip: string, port: number): string {
  return ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;
}

function nomadVariables(input: TaskEnvInput): Record<string, string> {
  const { alloc, job, task, dirs, node } = input;
  const env: Record<string, string> = {
    NOMAD_ALLOC_DIR: dirs.alloc,
    NOMAD_TASK_DIR: dirs.local,
    NOMAD_SECRETS_DIR: dirs.secrets,
    NOMAD_ALLOC_ID: alloc.id,
    NOMAD_SHORT_ALLOC_ID: alloc.id.slice(0, 8),
    NOMAD_ALLOC_NAME: alloc.name,
    NOMAD_ALLOC_INDEX: String(alloc.index),
    NOMAD_GROUP_NAME: alloc.group,
    NOMAD_TASK_NAME: task.name,
    NOMAD_JOB_ID: job.id,
    NOMAD_JOB_NAME: job.name,
    NOMAD_NAMESPACE: alloc.namespace,
    NOMAD_DC: node.datacenter,
    NOMAD_REGION: node.region,
  };
  if (job.parentId) env.NOMAD_JOB_PARENT_ID = job.parentId;
  if (task.memoryMb) env.NOMAD_MEMORY_LIMIT = String(task.memoryMb);
  if (task.memoryMaxMb) env.NOMAD_MEMORY_MAX_LIMIT = String(task.memoryMaxMb);
  if (task.cpuMhz) env.NOMAD_CPU_LIMIT = String(task.cpuMhz);
  for (const port of input.ports) {
    const label = cleanName(port.Label);
    const value = String(port.Value);
    const inTask = String(port.To > 0 ? port.To : port.Value);
    env[`NOMAD_IP_${label}`] = port.HostIP;
    env[`NOMAD_HOST_IP_${label}`] = port.HostIP;
    env[`NOMAD_HOST_PORT_${label}`] = value;
    env[`NOMAD_ADDR_${label}`] = hostPort(port.HostIP, port.Value);
    env[`NOMAD_HOST_ADDR_${label}`] = hostPort(port.HostIP, port.Value);
    env[`NOMAD_PORT_${label}`] = inTask;
    env[`NOMAD_ALLOC_PORT_${label}`] = inTask;
  }
  for (const [key, value] of Object.entries(input.meta)) {
    env[`NOMAD_META_${cleanName(key)}`] = value;
    env[`NOMAD_META_${cleanName(key.toUpperCase())}`] = value;
  }
  return env;
}

function nodeVariables(node: TaskEnvInput["node"]): Record<string, string> {
  const out: Record<string, string> = {
    "node.unique.id": node.id,
    "node.unique.name": node.name,
    "node.datacenter": node.datacenter,
    "node.region": node.region,
    "node.class": node.nodeClass,
  };
  for (const [key, value] of Object.entries(node.attributes)) out[`attr.${key}`] = value;
  for (const [key, value] of Object.entries(node.meta)) out[`meta.${key}`] = value;
  return out;
}

const TEMPLATE = /\$\{(?:env\[\s*"([^"\]]+)"\s*\]|([A-Za-z0-9_.\-]+))\}/g;

/** `variables[key]` when it is the object's own: `${constructor}` must not find Object.prototype's. */
function own(variables: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(variables, key) ? variables[key] : undefined;
}

/** Replaces `${key}` from `env` (plain names, env.X, env["X"]) then `node` variables; unknown keys stay. */
export function interpolate(text: string, env: Readonly<Record<string, string>>, node: Readonly<Record<string, string>>): string {
  return text.replace(TEMPLATE, (whole, indexed: string | undefined, plain: string | undefined) => {
    if (indexed !== undefined) return own(env, indexed) ?? whole;
    const key = plain!;
    return own(env, key) ?? (key.startsWith("env.") ? own(env, key.slice(4)) : undefined) ?? own(node, key) ?? whole;
  });
}

export interface TaskEnv {
  /** The variables the task starts with. */
  readonly env: Record<string, string>;
  /** Resolves `${...}` in driver config, args, paths. */
  interpolate(text: string): string;
}

export function buildTaskEnv(input: TaskEnvInput): TaskEnv {
  const node = nodeVariables(input.node);
  const nomad = nomadVariables(input);
  const env: Record<string, string> = { ...input.hostEnv, ...nomad };
  for (const [key, value] of Object.entries(input.task.env)) env[key] = interpolate(value, env, node);
  return { env, interpolate: (text) => interpolate(text, env, node) };
}
