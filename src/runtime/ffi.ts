/**
 * Calling C functions from JavaScript, the same way on Bun and Deno: the part
 * of bun:ffi's API drover uses, with bun:ffi itself behind it on Bun
 * (bun/ffi.ts) and Deno.dlopen on Deno (deno/ffi.ts). A library is declared
 * once, as a table:
 *
 *   const SYMBOLS = { prctl: { args: [FFIType.i32, FFIType.u64], returns: FFIType.i32 } } as const;
 *   const libc = dlopen("libc.so.6", SYMBOLS).symbols;
 *
 * Pointers are plain numbers, as in bun:ffi: a `ptr` (or `cstring`) argument
 * takes a typed array (its bytes), a number from `ptr()` or a `ptr` result,
 * or null.
 */

/** The C types a declaration may use. A `cstring` result reads as a string; as an argument it is a pointer. */
export const FFIType = {
  i32: "i32",
  u32: "u32",
  i64: "i64",
  u64: "u64",
  ptr: "ptr",
  cstring: "cstring",
  void: "void",
} as const;

export type NativeType = (typeof FFIType)[keyof typeof FFIType];

/** The type of a declared argument or result, named as bun:ffi names it. */
export type FFIType = NativeType;

export interface NativeFunction {
  readonly args: readonly NativeType[];
  readonly returns: NativeType;
}

export type SymbolTable = Readonly<Record<string, NativeFunction>>;

/** An address, as a number. */
export type Pointer = number;

type ArgValue<T> = T extends "i32" | "u32"
  ? number
  : T extends "i64" | "u64"
    ? number | bigint
    : T extends "ptr" | "cstring"
      ? ArrayBufferView | Pointer | null
      : never;

type ResultValue<T> = T extends "i32" | "u32"
  ? number
  : T extends "i64" | "u64"
    ? number | bigint
    : T extends "ptr"
      ? Pointer | null
      : T extends "cstring"
        ? { toString(): string } | null
        : void;

type ArgValues<A extends readonly NativeType[]> = { -readonly [K in keyof A]: ArgValue<A[K]> };

/** The bound functions of a declaration table. */
export type Library<T extends SymbolTable> = {
  readonly [K in keyof T]: (...args: ArgValues<T[K]["args"]>) => ResultValue<T[K]["returns"]>;
};

/** What each runtime's half provides. */
export interface Ffi {
  /** Opens a shared library and binds `symbols`; throws when one is missing. */
  dlopen<T extends SymbolTable>(path: string, symbols: T): { symbols: Library<T> };
  /** The address of a typed array's bytes (valid while the array is alive and not moved). */
  ptr(view: ArrayBufferView): Pointer;
  read: {
    i32(pointer: Pointer, offset: number): number;
    u32(pointer: Pointer, offset: number): number;
  };
  /** The NUL-terminated string at `pointer + byteOffset`: `new CString(pointer, 19).toString()`. */
  CString: new (pointer: Pointer, byteOffset?: number) => { toString(): string };
}

export { CString, dlopen, ptr, read } from "@drover/runtime/ffi.ts";
