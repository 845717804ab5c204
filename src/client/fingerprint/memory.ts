/** Total memory, under Nomad's attribute name. */
export function memoryAttributes(meminfo: Map<string, number>): Record<string, string> {
  return { "memory.totalbytes": String(meminfo.get("MemTotal") ?? 0) };
}
