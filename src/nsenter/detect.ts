/**
 * Whether the exec driver can isolate tasks on this host, and if not, why.
 * The agent asks once at start-up: the driver reports itself unhealthy with
 * the reason and jobs asking for it are refused with it; raw_exec stays.
 */
import { existsSync, readFileSync } from "node:fs";
import { type CgroupLayout, detectCgroups } from "../cgroups/detect.ts";

export type IsolationSupport = { available: true } | { available: false; reason: string };

/** What the verdict depends on; gathered from the host by detectIsolation. */
export interface IsolationFacts {
  platform: string;
  euid: number;
  cgroups: CgroupLayout;
  /** Namespace kinds the kernel lacks (no /proc/self/ns/<kind>). */
  missingNamespaces: string[];
  /** "6.18.44-fc-v657" (uname -r). */
  kernelRelease: string;
  /** Set when libc lacks one of the calls the role makes. */
  libcError?: string;
}

const NAMESPACES = ["mnt", "pid", "uts", "ipc", "net", "cgroup"] as const;
/** mount_setattr (recursive read-only binds) arrived in 5.12, close_range in 5.11. */
const MINIMUM_KERNEL: readonly [number, number] = [5, 12];

export function judgeIsolation(facts: IsolationFacts): IsolationSupport {
  const refuse = (reason: string): IsolationSupport => ({ available: false, reason });
  if (facts.platform !== "linux") return refuse(`isolation needs Linux namespaces; this is ${facts.platform}`);
  if (facts.euid !== 0) return refuse(`the agent is not running as root (euid ${facts.euid})`);
  if (facts.cgroups.mode === "none") return refuse(`no cgroup controller: ${facts.cgroups.reason}`);
  if (facts.missingNamespaces.length > 0) return refuse(`the kernel lacks ${facts.missingNamespaces.join(", ")} namespaces`);
  const [major = 0, minor = 0] = facts.kernelRelease.split(/[.-]/).map(Number);
  const [needMajor, needMinor] = MINIMUM_KERNEL;
  if (major < needMajor || (major === needMajor && minor < needMinor)) {
    return refuse(`kernel ${facts.kernelRelease} is older than ${needMajor}.${needMinor} (mount_setattr)`);
  }
  if (facts.libcError) return refuse(`libc: ${facts.libcError}`);
  return { available: true };
}

async function libcError(): Promise<string | undefined> {
  try {
    (await import("../runtime/libc.ts")).loadIsolationCalls();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

export async function detectIsolation(): Promise<IsolationSupport> {
  const linux = process.platform === "linux";
  return judgeIsolation({
    platform: process.platform,
    euid: process.geteuid?.() ?? -1,
    cgroups: linux ? detectCgroups() : { mode: "none", reason: "not Linux" },
    missingNamespaces: NAMESPACES.filter((kind) => !existsSync(`/proc/self/ns/${kind}`)),
    kernelRelease: linux ? readFileSync("/proc/sys/kernel/osrelease", "utf8").trim() : "",
    libcError: linux ? await libcError() : undefined,
  });
}
