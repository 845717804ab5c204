/**
 * Classic BPF, as seccomp(2) runs it: the instruction encoding, where a
 * filter reads `struct seccomp_data`, and the verdicts it can return. A
 * filter is a list of instructions; `encode` lays them out as the kernel's
 * `struct sock_filter[]` (8 bytes each: u16 code, u8 jt, u8 jf, u32 k).
 */

// Instruction classes and modes (linux/bpf_common.h).
export const BPF_LD = 0x00;
export const BPF_JMP = 0x05;
export const BPF_RET = 0x06;
export const BPF_W = 0x00;
export const BPF_ABS = 0x20;
export const BPF_K = 0x00;
export const BPF_JEQ = 0x10;
export const BPF_JGE = 0x30;
export const BPF_JSET = 0x40;

/** Where a filter finds each field of `struct seccomp_data` (linux/seccomp.h). */
export const SECCOMP_DATA = {
  nr: 0,
  arch: 4,
  /** The low 32 bits of argument `i` (u64 each, little-endian on every architecture drover runs on). */
  argLow: (i: number) => 16 + 8 * i,
} as const;

// Verdicts (linux/seccomp.h); ERRNO carries the errno in its low 16 bits.
export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const SECCOMP_RET_DATA = 0x0000ffff;

/** The kernel refuses longer programs (BPF_MAXINSNS). */
export const BPF_MAX_INSTRUCTIONS = 4096;
/** A conditional jump skips at most this many instructions (jt and jf are u8). */
export const BPF_MAX_JUMP = 255;

export interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** A = the 32-bit word at `offset` of seccomp_data. */
export function load(offset: number): Instruction {
  return { code: BPF_LD | BPF_W | BPF_ABS, jt: 0, jf: 0, k: offset };
}

/** if (A == k) skip `jt` else skip `jf`. */
export function jumpIfEqual(k: number, jt: number, jf: number): Instruction {
  return jump(BPF_JEQ, k, jt, jf);
}

/** if (A >= k) skip `jt` else skip `jf`. */
export function jumpIfAtLeast(k: number, jt: number, jf: number): Instruction {
  return jump(BPF_JGE, k, jt, jf);
}

/** if (A & k) skip `jt` else skip `jf`. */
export function jumpIfAnyBit(k: number, jt: number, jf: number): Instruction {
  return jump(BPF_JSET, k, jt, jf);
}

function jump(op: number, k: number, jt: number, jf: number): Instruction {
  if (jt > BPF_MAX_JUMP || jf > BPF_MAX_JUMP) throw new Error(`BPF jump of ${Math.max(jt, jf)} exceeds ${BPF_MAX_JUMP}`);
  return { code: BPF_JMP | op | BPF_K, jt, jf, k: k >>> 0 };
}

export function ret(verdict: number): Instruction {
  return { code: BPF_RET | BPF_K, jt: 0, jf: 0, k: verdict >>> 0 };
}

/** The verdict that fails a call with `errno` without running it. */
export function errnoVerdict(errno: number): number {
  return (SECCOMP_RET_ERRNO | (errno & SECCOMP_RET_DATA)) >>> 0;
}

/** The program as `struct sock_filter[]`. */
export function encode(program: readonly Instruction[]): Uint8Array {
  if (program.length === 0 || program.length > BPF_MAX_INSTRUCTIONS) throw new Error(`a BPF program needs 1 to ${BPF_MAX_INSTRUCTIONS} instructions, not ${program.length}`);
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach(({ code, jt, jf, k }, i) => {
    view.setUint16(i * 8, code, true);
    view.setUint8(i * 8 + 2, jt);
    view.setUint8(i * 8 + 3, jf);
    view.setUint32(i * 8 + 4, k, true);
  });
  return bytes;
}
