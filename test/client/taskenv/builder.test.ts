import { describe, expect, test } from "bun:test";
import { buildTaskEnv, filterHostEnv, interpolate, type TaskEnvInput } from "../../../src/client/taskenv/builder.ts";

const input = (over: Partial<TaskEnvInput> = {}): TaskEnvInput => ({
  alloc: { id: "6db5364c-7757-7a18-9335-a9a3f2dce009", name: "envdump.web[0]", index: 0, group: "web", namespace: "default" },
  job: { id: "envdump", name: "envdump" },
  task: { name: "srv", env: { FOO: "bar-${NOMAD_ALLOC_INDEX}" }, cpuMhz: 100, memoryMb: 128, memoryMaxMb: 0 },
  meta: { team: "core" },
  ports: [{ Label: "http", Value: 22277, To: 0, HostIP: "127.0.0.1" }],
  dirs: { alloc: "/data/alloc/6db5/alloc", local: "/data/alloc/6db5/srv/local", secrets: "/data/alloc/6db5/srv/secrets" },
  node: { id: "node-1", name: "host-a", nodeClass: "", datacenter: "dc1", region: "global", attributes: { "kernel.name": "linux" }, meta: { rack: "r1" } },
  hostEnv: { PATH: "/usr/bin:/bin", HOME: "/root" },
  ...over,
});

describe("task environment", () => {
  test("Nomad's variables, as a Nomad 0.12 task saw them", () => {
    const { env } = buildTaskEnv(input());
    expect(env).toMatchObject({
      NOMAD_ADDR_http: "127.0.0.1:22277",
      NOMAD_ALLOC_DIR: "/data/alloc/6db5/alloc",
      NOMAD_ALLOC_ID: "6db5364c-7757-7a18-9335-a9a3f2dce009",
      NOMAD_SHORT_ALLOC_ID: "6db5364c",
      NOMAD_ALLOC_INDEX: "0",
      NOMAD_ALLOC_NAME: "envdump.web[0]",
      NOMAD_ALLOC_PORT_http: "22277",
      NOMAD_CPU_LIMIT: "100",
      NOMAD_DC: "dc1",
      NOMAD_GROUP_NAME: "web",
      NOMAD_HOST_ADDR_http: "127.0.0.1:22277",
      NOMAD_HOST_IP_http: "127.0.0.1",
      NOMAD_HOST_PORT_http: "22277",
      NOMAD_IP_http: "127.0.0.1",
      NOMAD_JOB_ID: "envdump",
      NOMAD_JOB_NAME: "envdump",
      NOMAD_MEMORY_LIMIT: "128",
      NOMAD_META_TEAM: "core",
      NOMAD_META_team: "core",
      NOMAD_NAMESPACE: "default",
      NOMAD_PORT_http: "22277",
      NOMAD_REGION: "global",
      NOMAD_SECRETS_DIR: "/data/alloc/6db5/srv/secrets",
      NOMAD_TASK_DIR: "/data/alloc/6db5/srv/local",
      NOMAD_TASK_NAME: "srv",
      FOO: "bar-0",
      PATH: "/usr/bin:/bin",
    });
    expect(env.NOMAD_MEMORY_MAX_LIMIT).toBeUndefined();
  });

  test("a mapped port: NOMAD_PORT_ is the task's side, HOST_PORT the host's", () => {
    const { env } = buildTaskEnv(input({ ports: [{ Label: "db-main", Value: 25000, To: 5432, HostIP: "10.0.0.5" }] }));
    expect(env.NOMAD_PORT_db_main).toBe("5432");
    expect(env.NOMAD_HOST_PORT_db_main).toBe("25000");
    expect(env.NOMAD_ADDR_db_main).toBe("10.0.0.5:25000");
  });

  test("the env block overrides host variables; host variables never override NOMAD_*", () => {
    const { env } = buildTaskEnv(
      input({ hostEnv: { PATH: "/host", NOMAD_TASK_NAME: "spoof" }, task: { ...input().task, env: { PATH: "/task:${PATH}" } } }),
    );
    expect(env.PATH).toBe("/task:/host");
    expect(env.NOMAD_TASK_NAME).toBe("srv");
  });

  test("interpolation: env, env.X, env[\"X\"], node attributes and meta; unknown stays literal", () => {
    const taskEnv = buildTaskEnv(input());
    expect(taskEnv.interpolate("${NOMAD_TASK_DIR}/conf")).toBe("/data/alloc/6db5/srv/local/conf");
    expect(taskEnv.interpolate('${env.HOME}|${env["FOO"]}')).toBe("/root|bar-0");
    expect(taskEnv.interpolate("${attr.kernel.name}-${meta.rack}-${node.unique.id}-${node.datacenter}")).toBe("linux-r1-node-1-dc1");
    expect(taskEnv.interpolate("${NOPE} and $HOME and ${}")).toBe("${NOPE} and $HOME and ${}");
    expect(interpolate("${a}${a}", { a: "x" }, {})).toBe("xx");
  });

  test("names of Object.prototype members are unknown keys, left as written", () => {
    const text = '${constructor} ${toString} ${env.hasOwnProperty} ${env["valueOf"]} ${__proto__}';
    expect(interpolate(text, {}, {})).toBe(text);
  });

  test("values are substituted once: a value that itself looks like a template is not expanded again", () => {
    const taskEnv = buildTaskEnv(input({ task: { ...input().task, env: { A: "${HOME}", B: "literal ${A}" } }, hostEnv: { HOME: "${SECRET}", SECRET: "s3cret" } }));
    expect(taskEnv.env.A).toBe("${SECRET}");
    expect(taskEnv.env.B).toBe("literal ${SECRET}");
  });

  test("the agent's credentials and NOMAD_* variables stay out of tasks", () => {
    expect(filterHostEnv({ PATH: "/bin", VAULT_TOKEN: "t", AWS_SECRET_ACCESS_KEY: "k", NOMAD_ADDR: "http://x", LANG: undefined })).toEqual({ PATH: "/bin" });
  });
});
