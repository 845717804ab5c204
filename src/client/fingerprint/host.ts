/** Operating system, kernel and host name, under Nomad's attribute names. */
import { readFileSync } from "node:fs";
import { arch, hostname, release, type } from "node:os";

function osRelease(path = "/etc/os-release"): Record<string, string> {
  const out: Record<string, string> = {};
  try {
    for (const line of readFileSync(path, "utf8").split("\n")) {
      const match = /^([A-Z_]+)=(.*)$/.exec(line);
      if (match) out[match[1]!] = match[2]!.replace(/^"(.*)"$/, "$1");
    }
  } catch {
    // Minimal images have no os-release; the kernel facts still stand.
  }
  return out;
}

export function hostAttributes(): Record<string, string> {
  const os = osRelease();
  return {
    "kernel.name": type().toLowerCase(),
    "kernel.version": release(),
    "kernel.arch": arch() === "x64" ? "x86_64" : arch(),
    "os.name": os.ID ?? "unknown",
    "os.version": os.VERSION_ID ?? "unknown",
    "os.pretty_name": os.PRETTY_NAME ?? "unknown",
    "unique.hostname": hostname(),
  };
}
