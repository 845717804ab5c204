/** runtime/ffi.ts on Bun: bun:ffi takes the declaration tables as they are. */
import { CString, dlopen as bunDlopen, type FFIFunction, ptr as bunPtr, read as bunRead, type Pointer as BunPointer } from "bun:ffi";
import type { Ffi, Library, SymbolTable } from "../ffi.ts";

export const dlopen: Ffi["dlopen"] = <T extends SymbolTable>(path: string, symbols: T) =>
  bunDlopen(path, symbols as unknown as Record<string, FFIFunction>).symbols as unknown as Library<T>;

export const ptr: Ffi["ptr"] = (view) => bunPtr(view as NodeJS.TypedArray);

export const read: Ffi["read"] = {
  i32: (pointer, offset) => bunRead.i32(pointer as BunPointer, offset),
  u32: (pointer, offset) => bunRead.u32(pointer as BunPointer, offset),
};

export const readCString: Ffi["readCString"] = (pointer, offset = 0) => new CString(pointer as BunPointer, offset).toString();
