/**
 * A device allow-list on cgroup v2, which has no devices files: an eBPF
 * program of type CGROUP_DEVICE attached to the task's cgroup, as runc and
 * crun attach one. The kernel runs it on every open and mknod of a device
 * node by a process in the cgroup; 1 allows, 0 refuses (EPERM).
 *
 *   ctx (struct bpf_cgroup_dev_ctx): u32 access_type (access << 16 | type), u32 major, u32 minor
 *   r2 = type, r3 = access, r4 = major, r5 = minor
 *   per rule:  type differs ─┐  access outside the rule's ─┐  major differs ─┐  minor differs ─┐
 *              r0 = 1; exit  <── none of these                                    next rule <──┘
 *   r0 = 0; exit
 *
 * Rules are devices.allow's ("c 1:3 rwm", "c 136:* rwm"), so v1 and v2 share
 * one list (devices.ts).
 */
import { attachCgroupDeviceProgram, loadCgroupDeviceProgram, O_CLOEXEC, O_DIRECTORY, O_RDONLY, sysClose, sysOpen } from "../runtime/libc.ts";

export interface DeviceRule {
  /** "a" matches both. */
  type: "a" | "b" | "c";
  major: number | "*";
  minor: number | "*";
  /** Letters of "rwm". */
  access: string;
}

// linux/bpf.h: bpf_cgroup_dev_ctx's type and access values.
const DEVICE_TYPES = { b: 1, c: 2 } as const;
const ACCESS_BITS: Readonly<Record<string, number>> = { m: 1, r: 2, w: 4 };
const ALL_ACCESS = 7;
const TYPE_MASK = 0xffff;
const ACCESS_SHIFT = 16;
const CTX_MAJOR = 4;
const CTX_MINOR = 8;

// eBPF opcodes (linux/bpf_common.h, linux/bpf.h).
const LDX_MEM_W = 0x61;
const ALU64_AND_K = 0x57;
const ALU64_RSH_K = 0x77;
const ALU64_MOV_K = 0xb7;
const ALU64_MOV_X = 0xbf;
const JMP_JNE_K = 0x55;
const JMP_EXIT = 0x95;

const RULE = /^([abc]) (\*|\d+):(\*|\d+) ([rwm]{1,3})$/;

/** A devices.allow rule read back; throws on one that is not. */
export function parseDeviceRule(rule: string): DeviceRule {
  const match = RULE.exec(rule);
  if (!match) throw new Error(`device rule "${rule}": not "type major:minor access"`);
  const number = (text: string) => (text === "*" ? "*" : Number(text));
  return { type: match[1] as DeviceRule["type"], major: number(match[2]!), minor: number(match[3]!), access: match[4]! };
}

type Instruction = [code: number, dst: number, src: number, off: number, imm: number];

/** The program allowing exactly `rules`, as the kernel takes it (struct bpf_insn[]). */
export function deviceProgram(rules: readonly DeviceRule[]): Uint8Array {
  const program: Instruction[] = [
    [LDX_MEM_W, 2, 1, 0, 0],
    [ALU64_AND_K, 2, 0, 0, TYPE_MASK],
    [LDX_MEM_W, 3, 1, 0, 0],
    [ALU64_RSH_K, 3, 0, 0, ACCESS_SHIFT],
    [LDX_MEM_W, 4, 1, CTX_MAJOR, 0],
    [LDX_MEM_W, 5, 1, CTX_MINOR, 0],
  ];
  for (const rule of rules) {
    // Each test jumps past the rest of its block when it fails; -1 marks "to the next rule" until the block's length is known.
    const block: Instruction[] = [];
    if (rule.type !== "a") block.push([JMP_JNE_K, 2, 0, -1, DEVICE_TYPES[rule.type]]);
    const denied = ALL_ACCESS & ~[...rule.access].reduce((bits, letter) => bits | ACCESS_BITS[letter]!, 0);
    if (denied !== 0) block.push([ALU64_MOV_X, 1, 3, 0, 0], [ALU64_AND_K, 1, 0, 0, denied], [JMP_JNE_K, 1, 0, -1, 0]);
    if (rule.major !== "*") block.push([JMP_JNE_K, 4, 0, -1, rule.major]);
    if (rule.minor !== "*") block.push([JMP_JNE_K, 5, 0, -1, rule.minor]);
    block.push([ALU64_MOV_K, 0, 0, 0, 1], [JMP_EXIT, 0, 0, 0, 0]);
    program.push(...block.map(([code, dst, src, off, imm], at): Instruction => [code, dst, src, off === -1 ? block.length - at - 1 : off, imm]));
  }
  program.push([ALU64_MOV_K, 0, 0, 0, 0], [JMP_EXIT, 0, 0, 0, 0]);
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach(([code, dst, src, off, imm], at) => {
    view.setUint8(at * 8, code);
    view.setUint8(at * 8 + 1, (src << 4) | dst);
    view.setInt16(at * 8 + 2, off, true);
    view.setInt32(at * 8 + 4, imm, true);
  });
  return bytes;
}

/** Lets processes in the v2 cgroup at `dir` use only the devices `rules` allow; throws (SysError) when the kernel refuses. */
export function attachDeviceFilter(dir: string, rules: readonly string[]): void {
  const program = loadCgroupDeviceProgram(deviceProgram(rules.map(parseDeviceRule)));
  try {
    const cgroup = sysOpen(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    try {
      attachCgroupDeviceProgram(cgroup, program);
    } finally {
      sysClose(cgroup);
    }
  } finally {
    // The attachment holds the program from here on, until the cgroup is removed.
    sysClose(program);
  }
}
