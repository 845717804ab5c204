/** runtime/ffi.ts on Bun: bun:ffi itself. */
import { CString as BunCString, dlopen as bunDlopen, type FFIFunction, ptr as bunPtr, read as bunRead, type Pointer as BunPointer } from "bun:ffi";
import type { Ffi } from "../ffi.ts";

export const dlopen = bunDlopen as unknown as Ffi["dlopen"] & ((path: string, symbols: Record<string, FFIFunction>) => unknown);

export const ptr: Ffi["ptr"] = (view) => bunPtr(view as NodeJS.TypedArray);

export const read: Ffi["read"] = {
  i32: (pointer, offset) => bunRead.i32(pointer as BunPointer, offset),
  u32: (pointer, offset) => bunRead.u32(pointer as BunPointer, offset),
};

export const CString = BunCString as unknown as Ffi["CString"];
