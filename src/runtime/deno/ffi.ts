/**
 * runtime/ffi.ts on Deno: Deno.dlopen with bun:ffi's conventions on top.
 * Deno passes pointers as objects and tells a buffer from a pointer by the
 * declaration; the tables say `ptr` (or `cstring`) for both, so each function
 * with a pointer in its signature gets a small wrapper that converts typed
 * arrays and numbers to pointer objects, and pointer results back to numbers.
 */
import type { Ffi, Library, NativeType, Pointer, SymbolTable } from "../ffi.ts";

const DENO_TYPES: Readonly<Record<NativeType, Deno.NativeResultType>> = {
  i32: "i32",
  u32: "u32",
  i64: "i64",
  u64: "u64",
  ptr: "pointer",
  cstring: "pointer",
  void: "void",
};

function toPointer(value: unknown): Deno.PointerValue {
  if (value === null || value === undefined) return null;
  if (ArrayBuffer.isView(value)) return Deno.UnsafePointer.of(value as Uint8Array<ArrayBuffer>);
  return Deno.UnsafePointer.create(BigInt(value as number));
}

function fromPointer(value: Deno.PointerValue): Pointer | null {
  return value === null ? null : Number(Deno.UnsafePointer.value(value));
}

type Native = (...args: unknown[]) => unknown;

function wrap(native: Native, args: readonly NativeType[], returns: NativeType): Native {
  const pointerArgs = args.flatMap((type, i) => (type === "ptr" || type === "cstring" ? [i] : []));
  if (pointerArgs.length === 0 && returns !== "ptr" && returns !== "cstring") return native;
  return (...values: unknown[]) => {
    for (const i of pointerArgs) values[i] = toPointer(values[i]);
    const result = native(...values);
    if (returns === "ptr") return fromPointer(result as Deno.PointerValue);
    if (returns === "cstring") return result === null ? null : Deno.UnsafePointerView.getCString(result as Deno.PointerObject);
    return result;
  };
}

export const dlopen: Ffi["dlopen"] = <T extends SymbolTable>(path: string, symbols: T) => {
  const declarations: Record<string, Deno.ForeignFunction> = {};
  for (const [name, fn] of Object.entries(symbols)) {
    declarations[name] = { parameters: fn.args.map((type) => DENO_TYPES[type] as Deno.NativeType), result: DENO_TYPES[fn.returns] };
  }
  const native = Deno.dlopen(path, declarations).symbols as unknown as Record<string, Native>;
  const bound: Record<string, Native> = {};
  for (const [name, fn] of Object.entries(symbols)) bound[name] = wrap(native[name]!, fn.args, fn.returns);
  return { symbols: bound as unknown as Library<T> };
};

export const ptr: Ffi["ptr"] = (view) => fromPointer(Deno.UnsafePointer.of(view as Uint8Array<ArrayBuffer>))!;

function view(pointer: Pointer): Deno.UnsafePointerView {
  return new Deno.UnsafePointerView(Deno.UnsafePointer.create(BigInt(pointer))!);
}

export const read: Ffi["read"] = {
  i32: (pointer, offset) => view(pointer).getInt32(offset),
  u32: (pointer, offset) => view(pointer).getUint32(offset),
};

export const CString: Ffi["CString"] = class {
  private readonly text: string;

  constructor(pointer: Pointer, byteOffset = 0) {
    this.text = view(pointer).getCString(byteOffset);
  }

  toString(): string {
    return this.text;
  }
};
