/**
 * The functions a job file may call: Nomad 1.6's jobspec2/functions.go list
 * (cty's stdlib and go-cty-funcs). `try`, `can` and `convert` are read in
 * expressions.ts, since their arguments are expressions and types rather
 * than values.
 */
import type { HclFunction } from "../expressions.ts";
import { cidrFunctions } from "./cidr.ts";
import { collectionFunctions } from "./collections.ts";
import { cryptoFunctions } from "./crypto.ts";
import { datetimeFunctions } from "./datetime.ts";
import { encodingFunctions } from "./encoding.ts";
import { filesystemFunctions, refusedFilesystemFunctions } from "./filesystem.ts";
import { numericFunctions } from "./numeric.ts";
import { stringFunctions } from "./strings.ts";

export interface FunctionOptions {
  /** The folder `file()` and the other file functions resolve relative paths from (the job file's). */
  baseDir: string;
  /** Whether file functions may read (the CLI) or refuse (a job sent to the API). */
  allowFs: boolean;
}

export function hclFunctions({ baseDir, allowFs }: FunctionOptions): Readonly<Record<string, HclFunction>> {
  return {
    ...stringFunctions,
    ...collectionFunctions,
    ...numericFunctions,
    ...encodingFunctions,
    ...datetimeFunctions,
    ...cryptoFunctions,
    ...cidrFunctions,
    ...(allowFs ? filesystemFunctions(baseDir) : refusedFilesystemFunctions()),
  };
}
