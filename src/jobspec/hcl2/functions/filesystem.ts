/**
 * The file functions, relative to the job file's folder. Nomad enables them
 * only where the job file is read on the operator's machine (the CLI); a job
 * sent to the API for parsing gets an error naming the function instead.
 */
import { Buffer } from "node:buffer";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { asString, HclEvalError, type Value } from "../values.ts";
import { arg, arity, type FunctionTable } from "./args.ts";

const str = (args: readonly Value[], i: number) => asString(arg(args, i));

function read(base: string, path: string): Buffer {
  try {
    return readFileSync(resolve(base, path));
  } catch (err) {
    throw new HclEvalError(`cannot read ${JSON.stringify(path)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** A glob's pattern as a regular expression (`*`, `**`, `?`, `[...]`, `{a,b}`) over slash-separated paths. */
function globRegExp(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === "*" && pattern[i + 1] === "*") {
      out += pattern[i + 2] === "/" ? "(?:.*/)?" : ".*";
      i += pattern[i + 2] === "/" ? 2 : 1;
    } else if (ch === "*") out += "[^/]*";
    else if (ch === "?") out += "[^/]";
    else if (ch === "[") {
      const end = pattern.indexOf("]", i);
      out += end === -1 ? "\\[" : pattern.slice(i, end + 1);
      if (end !== -1) i = end;
    } else if (ch === "{") {
      const end = pattern.indexOf("}", i);
      out += end === -1 ? "\\{" : `(?:${pattern.slice(i + 1, end).split(",").map((alt) => alt.replace(/[.+^$()|\\]/g, "\\$&")).join("|")})`;
      if (end !== -1) i = end;
    } else out += ch.replace(/[.+^$()|\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}

function walk(root: string, at = ""): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, at), { withFileTypes: true })) {
    const path = at === "" ? entry.name : `${at}/${entry.name}`;
    if (entry.isDirectory()) out.push(...walk(root, path));
    else out.push(path);
  }
  return out;
}

function fileset(base: string, path: string, pattern: string): string[] {
  const root = resolve(base, path);
  if (!existsSync(root) || !statSync(root).isDirectory()) return [];
  const matcher = globRegExp(pattern);
  return walk(root)
    .filter((file) => matcher.test(file))
    .sort();
}

export function filesystemFunctions(base: string): FunctionTable {
  return {
    abspath: arity(1, 1, (args) => resolve(str(args, 0))),
    basename: arity(1, 1, (args) => basename(str(args, 0))),
    dirname: arity(1, 1, (args) => dirname(str(args, 0))),
    file: arity(1, 1, (args) => {
      const bytes = read(base, str(args, 0));
      const text = new TextDecoder("utf-8", { fatal: false }).decode(bytes);
      if (text.includes("\uFFFD")) throw new HclEvalError(`${JSON.stringify(str(args, 0))} is not UTF-8 text; use filebase64`);
      return text;
    }),
    filebase64: arity(1, 1, (args) => read(base, str(args, 0)).toString("base64")),
    fileexists: arity(1, 1, (args) => {
      const path = resolve(base, str(args, 0));
      if (!existsSync(path)) return false;
      if (!statSync(path).isFile()) throw new HclEvalError(`${JSON.stringify(str(args, 0))} is not a regular file`);
      return true;
    }),
    fileset: arity(2, 2, (args) => fileset(base, str(args, 0), str(args, 1))),
    pathexpand: arity(1, 1, (args) => {
      const path = str(args, 0);
      if (path === "~") return homedir();
      return path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
    }),
  };
}

/** The same names, each refusing: the job is being parsed where the operator's files are not. */
export function refusedFilesystemFunctions(): FunctionTable {
  return Object.fromEntries(
    Object.keys(filesystemFunctions("")).map((name) => [
      name,
      () => {
        throw new HclEvalError("filesystem functions are disabled here (only the CLI reads files next to the job file)");
      },
    ]),
  );
}
