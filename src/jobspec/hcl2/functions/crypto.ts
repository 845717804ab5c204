/** Hashes, RSA decryption and UUIDs, as Nomad's jobspec2 registers them (go-cty-funcs). */
import { Buffer } from "node:buffer";
import { createHash, constants, privateDecrypt, randomUUID } from "node:crypto";
import { asString, HclEvalError, type Value } from "../values.ts";
import { arg, arity, type FunctionTable } from "./args.ts";

const str = (args: readonly Value[], i: number) => asString(arg(args, i));
const hash = (algorithm: string) => arity(1, 1, (args) => createHash(algorithm).update(str(args, 0), "utf8").digest("hex"));

/** RFC 4122's namespaces uuidv5() names. */
const UUID_NAMESPACES: Readonly<Record<string, string>> = {
  dns: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
  url: "6ba7b811-9dad-11d1-80b4-00c04fd430c8",
  oid: "6ba7b812-9dad-11d1-80b4-00c04fd430c8",
  x500: "6ba7b814-9dad-11d1-80b4-00c04fd430c8",
};
const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

function uuidv5(namespace: string, name: string): string {
  const space = UUID_NAMESPACES[namespace] ?? namespace;
  if (!UUID.test(space)) throw new HclEvalError(`${JSON.stringify(namespace)} is neither dns, url, oid, x500 nor a UUID`);
  const digest = createHash("sha1").update(Buffer.from(space.replace(/-/g, ""), "hex")).update(name, "utf8").digest();
  digest[6] = (digest[6]! & 0x0f) | 0x50;
  digest[8] = (digest[8]! & 0x3f) | 0x80;
  const hex = digest.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function rsadecrypt(ciphertext: string, key: string): string {
  try {
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(ciphertext, "base64")).toString("utf8");
  } catch (err) {
    throw new HclEvalError(`cannot decrypt: ${(err as Error).message}`);
  }
}

export const cryptoFunctions: FunctionTable = {
  md5: hash("md5"),
  sha1: hash("sha1"),
  sha256: hash("sha256"),
  sha512: hash("sha512"),
  bcrypt: arity(1, 2, () => {
    throw new HclEvalError("bcrypt is not available in drover's job files (its result differs on every call, so a job using it changes on every run)");
  }),
  rsadecrypt: arity(2, 2, (args) => rsadecrypt(str(args, 0), str(args, 1))),
  uuidv4: arity(0, 0, () => randomUUID()),
  uuidv5: arity(2, 2, (args) => uuidv5(str(args, 0), str(args, 1))),
};
