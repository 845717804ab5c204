/** The IsolationSpec and ExecSpec documents: defaults, and bad fields named before anything runs. */
import { describe, expect, test } from "bun:test";
import { DEFAULT_EXEC_CAPABILITIES } from "../../src/lib/capabilities.ts";
import { DEFAULT_CHROOT_ENV } from "../../src/nsenter/spec.ts";
import { ExecSpecSchema, IsolationSpecSchema } from "../../src/nsenter/spec.ts";
import { parseOrThrow, ValidationError } from "../../src/lib/validation.ts";

const minimal = {
  argv: ["/bin/true"],
  env: { PATH: "/usr/bin" },
  hostname: "a1b2c3d4",
  taskDir: "/var/lib/drover/alloc/a1b2c3d4-0000/web",
  allocDir: "/var/lib/drover/alloc/a1b2c3d4-0000/alloc",
};

function problems(input: unknown): string[] {
  try {
    parseOrThrow(IsolationSpecSchema, input, "spec");
  } catch (err) {
    if (err instanceof ValidationError) return err.problems;
    throw err;
  }
  return [];
}

describe("IsolationSpec", () => {
  test("fills Nomad's defaults", () => {
    const spec = parseOrThrow(IsolationSpecSchema, minimal, "spec");
    expect(spec.user).toBe("nobody");
    expect(spec.cwd).toBe("/");
    expect(spec.network).toBe("host");
    expect(spec.chrootEnv).toEqual(DEFAULT_CHROOT_ENV);
    expect(spec.capabilities).toEqual([...DEFAULT_EXEC_CAPABILITIES]);
    expect(spec.cgroups).toEqual([]);
    expect(spec.rlimits).toEqual({});
    expect(spec.oomScoreAdj).toBeUndefined();
  });

  test.each([
    ["cwd", { cwd: "/local/../../etc" }, "cwd: must be an absolute path"],
    ["a relative task dir", { taskDir: "alloc/web" }, "taskDir: must be an absolute path"],
    ["/ as the alloc dir", { allocDir: "/" }, "allocDir: must not be /"],
    ["a chroot_env entry over /proc", { chrootEnv: { "/usr": "/proc/usr" } }, "chrootEnv: paths inside must not be"],
    ["a chroot_env entry with ..", { chrootEnv: { "/usr/../etc": "/etc" } }, "must be an absolute path"],
    ["an empty argv", { argv: [] }, "argv: must name a command"],
    ["a variable name with =", { env: { "A=B": "c" } }, "variable names must be non-empty"],
    ["soft above hard", { rlimits: { nofile: { soft: 10, hard: 5 } } }, "rlimits.nofile: soft must not exceed hard"],
    ["an unknown rlimit", { rlimits: { files: { soft: 1, hard: 1 } } }, "rlimits"],
    ["an unknown capability", { capabilities: ["sys_everything"] }, "capabilities.0"],
    ["a bad hostname", { hostname: "no spaces" }, "hostname: must be 1-63"],
    ["a bad network mode", { network: "bridge" }, "network"],
    ["an oom_score_adj out of range", { oomScoreAdj: 1001 }, "oomScoreAdj"],
    ["an unknown key", { privileged: true }, 'unknown key "privileged"'],
  ])("rejects %s, naming the field", (_, override, message) => {
    const found = problems({ ...minimal, ...override });
    expect(found.join("; ")).toContain(message);
  });
});

describe("ExecSpec", () => {
  test("needs only a command and its environment", () => {
    const spec = parseOrThrow(ExecSpecSchema, { argv: ["sh"], env: {} }, "exec spec");
    expect(spec).toMatchObject({ user: "nobody", cwd: "/", cgroups: [] });
  });
});
