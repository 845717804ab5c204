/**
 * The default syscall filter: the generated program, run by a small classic-BPF
 * interpreter over seccomp_data (every rule, both architectures), then inside
 * real tasks as nobody and as root: each refused call fails with EPERM, while
 * sh, coreutils and a threaded, forking Python still work.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import {
  BPF_ABS,
  BPF_JEQ,
  BPF_JGE,
  BPF_JMP,
  BPF_JSET,
  BPF_LD,
  BPF_RET,
  BPF_W,
  encode,
  errnoVerdict,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_KILL_PROCESS,
  type Instruction,
} from "../../src/nsenter/seccomp/bpf.ts";
import { buildFilter, CLONE_NAMESPACE_FLAGS, DEFAULT_RULES } from "../../src/nsenter/seccomp/profile.ts";
import { FILTERED_SYSCALLS, type FilteredSyscall } from "../../src/lib/syscall-filter.ts";
import { AUDIT_ARCH, hostSyscallArch, syscallNumber, SYSCALLS, X32_SYSCALL_BIT, type SyscallArch } from "../../src/nsenter/seccomp/syscalls.ts";
import { capabilities } from "../helpers/index.ts";
import { allocLayout, isolationSpec, killStarted, runScript, startExec, startTask, finish } from "./fixture.ts";

afterEach(killStarted);

const EPERM = 1;
const ENOSYS = 38;
const SIGCHLD = 17;
const CLONE_NEWUSER = 0x10000000;

/** Runs `program` on one call the way the kernel does: A, jumps, a returned verdict. */
function run(program: readonly Instruction[], call: { arch: number; nr: number; args?: number[] }): number {
  const word = (offset: number) => {
    if (offset === 0) return call.nr;
    if (offset === 4) return call.arch;
    const index = (offset - 16) / 8;
    return call.args?.[index] ?? 0;
  };
  let a = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc]!;
    if (code === (BPF_LD | BPF_W | BPF_ABS)) a = word(k);
    else if (code === (BPF_RET | 0)) return k;
    else if (code === (BPF_JMP | BPF_JEQ)) pc += a === k ? jt : jf;
    else if (code === (BPF_JMP | BPF_JGE)) pc += a >>> 0 >= k ? jt : jf;
    else if (code === (BPF_JMP | BPF_JSET)) pc += (a & k) !== 0 ? jt : jf;
    else throw new Error(`unexpected instruction ${code}`);
  }
  throw new Error("the program fell off its end");
}

describe.each(["x64", "arm64"] as SyscallArch[])("the generated filter (%s)", (arch) => {
  const program = buildFilter(arch);
  const native = AUDIT_ARCH[arch];
  const nr = (name: FilteredSyscall) => syscallNumber(arch, name)!;

  test("refuses every rule's call with EPERM (clone3 with ENOSYS, for libc to fall back to clone)", () => {
    for (const { call } of DEFAULT_RULES) {
      const number = syscallNumber(arch, call);
      if (number === undefined || call === "clone") continue;
      expect([call, run(program, { arch: native, nr: number })]).toEqual([call, errnoVerdict(call === "clone3" ? ENOSYS : EPERM)]);
    }
  });

  test("clone: a namespace flag is refused, a plain fork or thread is not", () => {
    expect(run(program, { arch: native, nr: nr("clone"), args: [CLONE_NEWUSER | SIGCHLD] })).toBe(errnoVerdict(EPERM));
    for (let bit = 0; bit < 32; bit++) {
      const flag = 2 ** bit;
      if (!(CLONE_NAMESPACE_FLAGS & flag)) continue;
      expect(run(program, { arch: native, nr: nr("clone"), args: [flag] })).toBe(errnoVerdict(EPERM));
    }
    const thread = 0x3d0f00; // CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID
    expect(run(program, { arch: native, nr: nr("clone"), args: [thread] })).toBe(SECCOMP_RET_ALLOW);
    expect(run(program, { arch: native, nr: nr("clone"), args: [SIGCHLD] })).toBe(SECCOMP_RET_ALLOW);
  });

  test("allows every other call, kills another architecture's, and lifts only the named rules", () => {
    const denied = new Set<number>(Object.values(SYSCALLS[arch]));
    for (let number = 0; number < 470; number++) if (!denied.has(number)) expect(run(program, { arch: native, nr: number })).toBe(SECCOMP_RET_ALLOW);
    expect(run(program, { arch: 0x40000003, nr: 1 })).toBe(SECCOMP_RET_KILL_PROCESS);
    if (arch === "x64") expect(run(program, { arch: native, nr: X32_SYSCALL_BIT | 1 })).toBe(errnoVerdict(EPERM));
    const lifted = buildFilter(arch, ["keyctl", "clone"]);
    expect(run(lifted, { arch: native, nr: nr("keyctl") })).toBe(SECCOMP_RET_ALLOW);
    expect(run(lifted, { arch: native, nr: nr("clone"), args: [CLONE_NEWUSER] })).toBe(SECCOMP_RET_ALLOW);
    expect(run(lifted, { arch: native, nr: nr("unshare") })).toBe(errnoVerdict(EPERM));
  });

  test("encodes as struct sock_filter[]: 8 bytes each, little-endian", () => {
    const bytes = encode(program);
    expect(bytes.length).toBe(program.length * 8);
    const view = new DataView(bytes.buffer);
    expect(view.getUint16(0, true)).toBe(BPF_LD | BPF_W | BPF_ABS);
    expect(view.getUint32(4, true)).toBe(4);
    expect(view.getUint32(12, true)).toBe(native);
  });
});

/**
 * Each rule's call made with arguments that are harmless if it runs (no-ops, NULL
 * pointers, bad descriptors), so that without the filter it fails some other way
 * (EFAULT, EBADF, EINVAL) or succeeds, never with the filter's EPERM alone.
 */
const PROBE_ARGS: Readonly<Record<string, number[]>> = {
  unshare: [0],
  setns: [-1, 0],
  clone: [CLONE_NEWUSER | 0x200], // with CLONE_FS: the kernel refuses the pair (EINVAL) if it gets that far
  clone3: [0, 0],
  keyctl: [0, -3, 0], // KEYCTL_GET_KEYRING_ID of the session keyring
  syslog: [10, 0, 0], // SYSLOG_ACTION_SIZE_BUFFER
  settimeofday: [0, 0],
  iopl: [0],
  ioperm: [0, 0, 0],
};

const PYTHON = "/usr/bin/python3";
const arch = hostSyscallArch();
const probe = (names: readonly string[]) =>
  [
    "import ctypes",
    "libc = ctypes.CDLL(None, use_errno=True)",
    "libc.syscall.restype = ctypes.c_long",
    `for name, nr, args in ${JSON.stringify(names.map((name) => [name, syscallNumber(arch!, name as FilteredSyscall), PROBE_ARGS[name] ?? [-1, 0, 0, 0, 0]]))}:`,
    "    ctypes.set_errno(0)",
    "    result = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])",
    "    print(name, 'ok' if result >= 0 else ctypes.get_errno())",
  ].join("\n");
const rulesHere = arch ? FILTERED_SYSCALLS.filter((name) => syscallNumber(arch, name) !== undefined) : [];
const expected = rulesHere.map((name) => `${name} ${name === "clone3" ? ENOSYS : EPERM}`);

describe.skipIf(!capabilities.root || !arch || !existsSync(PYTHON)).each(["nobody", "root"])("a task as %s", (user) => {
  test("fails each refused call with EPERM, and keeps no_new_privs", async () => {
    const result = await runScript(allocLayout(), `grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status; exec ${PYTHON} -c "$PROBE"`, {
      user,
      env: { ...isolationSpec(allocLayout()).env, PROBE: probe(rulesHere) },
    });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim().split("\n")).toEqual(["NoNewPrivs:\t1", "Seccomp:\t2", ...expected]);
  });

  test("still runs sh, coreutils, pipes and a threaded Python that starts processes", async () => {
    const python = "import threading, subprocess; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join(); print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())";
    const script = [
      "ls / | sort | head -n 1",
      "echo hi | tr a-z A-Z",
      "mkdir -p /tmp/d && cp /etc/hostname /tmp/d/h && wc -c < /tmp/d/h >/dev/null && echo copied",
      "date +%Y >/dev/null && id -u >/dev/null && echo coreutils",
      "(sleep 0.01 & wait) && echo subshell",
      `${PYTHON} -c "${python}"`,
    ].join("; ");
    const result = await runScript(allocLayout(), script, { user });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("alloc\nHI\ncopied\ncoreutils\nsubshell\nthread\nchild\n");
  });

  test("a lifted rule runs; the rest stay refused", async () => {
    const result = await runScript(allocLayout(), `exec ${PYTHON} -c "$PROBE"`, {
      user,
      allowSyscalls: ["unshare", "keyctl"],
      env: { ...isolationSpec(allocLayout()).env, PROBE: probe(["unshare", "keyctl", "mount"]) },
    });
    expect(result.stdout).toBe(`unshare ok\nkeyctl ok\nmount ${EPERM}\n`);
  });

  test("a command run inside the task gets the task's filter", async () => {
    const layout = allocLayout();
    const task = startTask(layout, isolationSpec(layout, { argv: ["sleep", "600"], user, allowSyscalls: ["keyctl"] }));
    await task.ready;
    const env = { PATH: "/usr/bin:/bin", PROBE: probe(["keyctl", "unshare"]) };
    const session = await finish(startExec(layout, task.pid, { argv: [PYTHON, "-c", probe(["keyctl", "unshare"])], env, user, allowSyscalls: ["keyctl"] }));
    expect(session.stdout).toBe(`keyctl ok\nunshare ${EPERM}\n`);
  });
});
