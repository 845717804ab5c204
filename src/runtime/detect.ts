/**
 * Which JavaScript runtime and packaging this process runs under. Everything
 * outside src/runtime/ asks here instead of probing globals itself.
 */

/** True under Bun (compiled binary or `bun src/main.ts`). */
export const isBun = typeof globalThis.Bun !== "undefined";

/**
 * True inside a `bun build --compile` executable: its modules live in the
 * embedded `/$bunfs/` file system.
 */
export const isCompiled = isBun && globalThis.Bun.main.startsWith("/$bunfs/");

const deno = (globalThis as { Deno?: { version: { deno: string } } }).Deno;

/** "bun 1.4.5", or the runtime's own name and version elsewhere. */
export const runtimeVersion: string = isBun
  ? `bun ${globalThis.Bun.version}`
  : deno
    ? `deno ${deno.version.deno}`
    : `node ${process.versions.node}`;
