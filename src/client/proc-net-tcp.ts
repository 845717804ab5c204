/**
 * The TCP socket with given ends, read from /proc/net/tcp and tcp6: what
 * sock_diag answers (state, owner uid, inode) for a kernel that offers no
 * sock_diag for TCP (inet_diag or tcp_diag not loaded). The tables carry no
 * cgroup id, so whoever holds the socket is found by its inode.
 *
 *   sl local_address rem_address st ... uid timeout inode
 *    0: 0100007F:1F90 0100007F:D2A4 01 ... 0   0       12345
 *
 * Addresses are the kernel's 32-bit words printed in host byte order, ports
 * big-endian hex. Each lookup reads the whole table, which grows with the
 * host's connections: a fallback, not the usual path.
 */
import { readFileSync } from "node:fs";
import { addressBytes, type Endpoint, type TcpSocketOwner } from "../runtime/sock-diag.ts";

const TABLES: Readonly<Record<number, string>> = { 4: "/proc/net/tcp", 16: "/proc/net/tcp6" };
const HEX_PORT_DIGITS = 4;

/** How the table prints an address: each 32-bit word as the host (little-endian) reads it, in hex. */
function tableAddress(bytes: Uint8Array, port: number): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let words = "";
  for (let at = 0; at < bytes.length; at += 4) words += view.getUint32(at, true).toString(16).toUpperCase().padStart(8, "0");
  return `${words}:${port.toString(16).toUpperCase().padStart(HEX_PORT_DIGITS, "0")}`;
}

/** The socket on this host whose local end is `local` and remote end `remote`, or null. */
export function lookupTcpSocketInProcfs(local: Endpoint, remote: Endpoint): TcpSocketOwner | null {
  const from = addressBytes(local.address);
  const to = addressBytes(remote.address);
  if (!from || !to || from.bytes.length !== to.bytes.length) return null;
  const localKey = tableAddress(from.bytes, local.port);
  const remoteKey = tableAddress(to.bytes, remote.port);
  let table: string;
  try {
    table = readFileSync(TABLES[from.bytes.length]!, "utf8");
  } catch {
    return null;
  }
  for (const line of table.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== localKey || fields[2] !== remoteKey) continue;
    return { state: parseInt(fields[3]!, 16), uid: Number(fields[7]), inode: Number(fields[9]), cgroupId: undefined };
  }
  return null;
}
