/** cidrhost, cidrnetmask, cidrsubnet, cidrsubnets over IPv4 and IPv6 prefixes (go-cty-funcs' cidr). */
import { asNumber, asString, HclEvalError, type Value } from "../values.ts";
import { arg, arity, type FunctionTable } from "./args.ts";

interface Prefix {
  address: bigint;
  bits: number;
  /** 32 for IPv4, 128 for IPv6. */
  width: number;
}

function parseIPv4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.reduce((n, part) => (n << 8n) | BigInt(part), 0n);
}

function parseIPv6(text: string): bigint | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.every((group) => /^[0-9a-fA-F]{1,4}$/.test(group))) return undefined;
  return all.reduce((n, group) => (n << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function parsePrefix(text: string): Prefix {
  const [ip, length] = text.split("/");
  const v4 = parseIPv4(ip ?? "");
  const address = v4 ?? parseIPv6(ip ?? "");
  const width = v4 === undefined ? 128 : 32;
  const bits = Number(length);
  if (address === undefined || length === undefined || !/^\d+$/.test(length) || bits > width) {
    throw new HclEvalError(`${JSON.stringify(text)} is not a CIDR prefix such as "10.0.0.0/16"`);
  }
  const mask = ((1n << BigInt(width)) - 1n) ^ ((1n << BigInt(width - bits)) - 1n);
  return { address: address & mask, bits, width };
}

function render(address: bigint, width: number): string {
  if (width === 32) return [24n, 16n, 8n, 0n].map((shift) => String((address >> shift) & 255n)).join(".");
  const groups = Array.from({ length: 8 }, (_, i) => ((address >> BigInt(112 - i * 16)) & 0xffffn).toString(16));
  // The longest run of zero groups is written "::" (RFC 5952).
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === "0") j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  if (best.at === -1) return groups.join(":");
  return `${groups.slice(0, best.at).join(":")}::${groups.slice(best.at + best.length).join(":")}`;
}

function host(prefix: Prefix, number: number): string {
  const size = 1n << BigInt(prefix.width - prefix.bits);
  const n = BigInt(number);
  const offset = n < 0n ? size + n : n;
  if (offset < 0n || offset >= size) throw new HclEvalError(`prefix of ${prefix.bits} bits has no host number ${number}`);
  return render(prefix.address + offset, prefix.width);
}

function subnet(prefix: Prefix, newbits: number, number: number): Prefix {
  const bits = prefix.bits + newbits;
  if (newbits < 0 || bits > prefix.width) throw new HclEvalError(`cannot extend a prefix of ${prefix.bits} bits by ${newbits}`);
  if (number < 0 || BigInt(number) >= 1n << BigInt(newbits)) throw new HclEvalError(`${newbits} new bits have no network number ${number}`);
  return { address: prefix.address | (BigInt(number) << BigInt(prefix.width - bits)), bits, width: prefix.width };
}

const show = (prefix: Prefix) => `${render(prefix.address, prefix.width)}/${prefix.bits}`;
const num = (args: readonly Value[], i: number) => asNumber(arg(args, i));

function subnets(prefix: Prefix, sizes: number[]): string[] {
  let next = prefix.address;
  return sizes.map((newbits) => {
    const bits = prefix.bits + newbits;
    if (newbits < 1 || bits > prefix.width) throw new HclEvalError(`cannot extend a prefix of ${prefix.bits} bits by ${newbits}`);
    const step = 1n << BigInt(prefix.width - bits);
    const start = ((next + step - 1n) / step) * step;
    if (start + step > prefix.address + (1n << BigInt(prefix.width - prefix.bits))) throw new HclEvalError("not enough room in the prefix for all the subnets");
    next = start + step;
    return show({ address: start, bits, width: prefix.width });
  });
}

export const cidrFunctions: FunctionTable = {
  cidrhost: arity(2, 2, (args) => host(parsePrefix(asString(arg(args, 0))), num(args, 1))),
  cidrnetmask: arity(1, 1, (args) => {
    const prefix = parsePrefix(asString(arg(args, 0)));
    if (prefix.width !== 32) throw new HclEvalError("only IPv4 prefixes have a netmask");
    return render(((1n << 32n) - 1n) ^ ((1n << BigInt(32 - prefix.bits)) - 1n), 32);
  }),
  cidrsubnet: arity(3, 3, (args) => show(subnet(parsePrefix(asString(arg(args, 0))), num(args, 1), num(args, 2)))),
  cidrsubnets: arity(1, Infinity, (args) => subnets(parsePrefix(asString(arg(args, 0))), args.slice(1).map((value) => asNumber(value)))),
};
