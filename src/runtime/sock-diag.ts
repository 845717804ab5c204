/**
 * Who holds the other end of a TCP connection on this host, asked of the
 * kernel with one sock_diag request (netlink, NETLINK_SOCK_DIAG): the exact
 * lookup of the socket whose local end is the peer's address and port and
 * whose remote end is ours. The answer carries the socket's owner uid, its
 * inode (the number /proc/PID/fd links name), and the v2 cgroup the process
 * that created it was in (INET_DIAG_CGROUP_ID, Linux 5.7+): a tag that stays
 * with the socket whoever holds it later.
 *
 *   request:  nlmsghdr | inet_diag_req_v2 (family, TCP, all states, sockid)
 *   answer:   nlmsghdr | inet_diag_msg (state, uid, inode) | rtattrs (CGROUP_ID)
 *             or NLMSG_ERROR (ENOENT: no such socket here)
 *
 * One netlink socket serves the process; the kernel answers within the send,
 * so the receive never waits.
 */
import { close, errno, MSG_DONTWAIT, netlinkSocket, sysRecv, sysSend } from "./libc.ts";

const NETLINK_SOCK_DIAG = 4;
const SOCK_DIAG_BY_FAMILY = 20;
const NLM_F_REQUEST = 0x1;
const NLM_F_DUMP = 0x300;
const NLMSG_ERROR = 0x2;
const NLMSG_DONE = 0x3;
const NLMSG_HEADER_BYTES = 16;
const INET_DIAG_REQ_BYTES = 56;
/** inet_diag_msg: family, state, timer, retrans, sockid (48), expires, rqueue, wqueue, uid, inode. */
const INET_DIAG_MSG_BYTES = 72;
const INET_DIAG_CGROUP_ID = 21;
const INET_DIAG_NOCOOKIE = 0xffffffff;
export const IPPROTO_TCP = 6;
const AF_INET = 2;
const AF_INET6 = 10;
const ALL_STATES = 0xffffffff;
const ENOENT = 2;
const EAGAIN = 11;
/** An answer is one inet_diag_msg and a few attributes; a page is room to spare. */
const ANSWER_BUFFER_BYTES = 8192;
/** The kernel answers within the send; these receives only cover a reply split oddly. */
const PROBE_RECEIVES = 4;
/** TCP_TIME_WAIT: a closed socket's remains, with no owner or cgroup left. */
export const TCP_TIME_WAIT = 6;

export interface Endpoint {
  address: string;
  port: number;
}

export interface TcpSocketOwner {
  /** TCP state (1 established, ... 6 time-wait). */
  state: number;
  uid: number;
  /** 0 when no process holds the socket any more. */
  inode: number;
  /** The v2 cgroup id (its directory's inode number); undefined where the kernel does not say. */
  cgroupId: bigint | undefined;
}

let fd: number | undefined;
let sequence = 0;
const answer = new Uint8Array(ANSWER_BUFFER_BYTES);

/** An address as sock_diag wants it: IPv4 (mapped ones too) in 4 bytes, IPv6 in 16; null if not an IP. */
export function addressBytes(address: string): { family: number; bytes: Uint8Array } | null {
  const v4 = /^(?:::ffff:)?(\d+)\.(\d+)\.(\d+)\.(\d+)$/i.exec(address);
  if (v4) return { family: AF_INET, bytes: Uint8Array.from(v4.slice(1, 5).map(Number)) };
  if (!address.includes(":")) return null;
  const [head = "", tail = ""] = address.split("::");
  const groups = (part: string) => (part ? part.split(":") : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  if (missing < 0 || (!address.includes("::") && missing !== 0)) return null;
  const all = [...groups(head), ...Array<string>(missing).fill("0"), ...groups(tail)];
  const bytes = new Uint8Array(16);
  const view = new DataView(bytes.buffer);
  all.forEach((group, i) => view.setUint16(i * 2, parseInt(group, 16), false));
  return { family: AF_INET6, bytes };
}

/** nlmsghdr and inet_diag_req_v2 with an all-zero socket id. */
function header(family: number, protocol: number, flags: number, states: number, seq: number): Uint8Array {
  const message = new Uint8Array(NLMSG_HEADER_BYTES + INET_DIAG_REQ_BYTES);
  const view = new DataView(message.buffer);
  view.setUint32(0, message.length, true);
  view.setUint16(4, SOCK_DIAG_BY_FAMILY, true);
  view.setUint16(6, flags, true);
  view.setUint32(8, seq, true);
  view.setUint8(NLMSG_HEADER_BYTES, family);
  view.setUint8(NLMSG_HEADER_BYTES + 1, protocol);
  view.setUint32(NLMSG_HEADER_BYTES + 4, states, true);
  return message;
}

function request(family: number, local: Uint8Array, localPort: number, remote: Uint8Array, remotePort: number, seq: number): Uint8Array {
  const message = header(family, IPPROTO_TCP, NLM_F_REQUEST, ALL_STATES, seq);
  const view = new DataView(message.buffer);
  const req = NLMSG_HEADER_BYTES;
  // struct inet_diag_sockid: sport, dport (big-endian), src[4], dst[4], if, cookie[2].
  const id = req + 8;
  view.setUint16(id, localPort, false);
  view.setUint16(id + 2, remotePort, false);
  message.set(local, id + 4);
  message.set(remote, id + 20);
  view.setUint32(id + 40, INET_DIAG_NOCOOKIE, true);
  view.setUint32(id + 44, INET_DIAG_NOCOOKIE, true);
  return message;
}

/**
 * The socket on this host whose local end is `local` and remote end is
 * `remote`, or null when there is none (a remote peer, or a socket already
 * gone). Throws on a netlink failure other than "not found".
 */
export function lookupTcpSocket(local: Endpoint, remote: Endpoint): TcpSocketOwner | null {
  const from = addressBytes(local.address);
  const to = addressBytes(remote.address);
  if (!from || !to || from.family !== to.family) return null;
  fd ??= netlinkSocket(NETLINK_SOCK_DIAG);
  const seq = (sequence = (sequence + 1) >>> 0);
  sysSend(fd, request(from.family, from.bytes, local.port, to.bytes, remote.port, seq));
  for (;;) {
    const length = sysRecv(fd, answer, MSG_DONTWAIT);
    if (length < 0) {
      if (errno() === EAGAIN) return null;
      throw new Error(`sock_diag: recv failed (errno ${errno()})`);
    }
    const view = new DataView(answer.buffer, 0, length);
    for (let at = 0; at + NLMSG_HEADER_BYTES <= length; ) {
      const size = view.getUint32(at, true);
      if (size < NLMSG_HEADER_BYTES) break;
      const type = view.getUint16(at + 4, true);
      // An answer to an earlier request that gave up is skipped.
      if (view.getUint32(at + 8, true) === seq) {
        if (type === NLMSG_ERROR) {
          const code = -view.getInt32(at + NLMSG_HEADER_BYTES, true);
          if (code === ENOENT) return null;
          throw new Error(`sock_diag: the kernel answered errno ${code}`);
        }
        if (type === SOCK_DIAG_BY_FAMILY) return parseAnswer(view, at, size);
      }
      at += (size + 3) & ~3;
    }
  }
}

/**
 * Why sock_diag cannot answer for `protocol`'s sockets here, or null when it
 * can. An exact lookup cannot tell "no such socket" from "no handler" (both
 * are ENOENT), so this asks for a dump matching no state: a kernel with the
 * inet_diag and tcp_diag handlers answers an empty dump, one without them an
 * error (sock_diag: no handler for the family; inet_diag: none for the
 * protocol, reported in the dump's end).
 */
export function sockDiagUnavailable(protocol = IPPROTO_TCP): string | null {
  let probe: number;
  try {
    probe = netlinkSocket(NETLINK_SOCK_DIAG);
  } catch (error) {
    return `no NETLINK_SOCK_DIAG socket (${(error as Error).message})`;
  }
  try {
    sysSend(probe, header(AF_INET, protocol, NLM_F_REQUEST | NLM_F_DUMP, 0, 1));
    for (let polls = 0; polls < PROBE_RECEIVES; polls++) {
      const length = sysRecv(probe, answer, MSG_DONTWAIT);
      if (length < 0) {
        if (errno() === EAGAIN) continue;
        return `recv failed (errno ${errno()})`;
      }
      const view = new DataView(answer.buffer, 0, length);
      for (let at = 0; at + NLMSG_HEADER_BYTES + 4 <= length; ) {
        const size = view.getUint32(at, true);
        if (size < NLMSG_HEADER_BYTES) break;
        const type = view.getUint16(at + 4, true);
        if (type === NLMSG_ERROR || type === NLMSG_DONE) {
          const code = -view.getInt32(at + NLMSG_HEADER_BYTES, true);
          return code === 0 ? null : `the kernel answered errno ${code}${code === ENOENT ? " (no handler)" : ""}`;
        }
        at += (size + 3) & ~3;
      }
    }
    return "no answer";
  } catch (error) {
    return (error as Error).message;
  } finally {
    close(probe);
  }
}

function parseAnswer(view: DataView, at: number, size: number): TcpSocketOwner {
  const msg = at + NLMSG_HEADER_BYTES;
  const owner: TcpSocketOwner = {
    state: view.getUint8(msg + 1),
    uid: view.getUint32(msg + 64, true),
    inode: view.getUint32(msg + 68, true),
    cgroupId: undefined,
  };
  // struct rtattr { u16 len; u16 type; } then the payload, each aligned to 4.
  for (let attr = msg + INET_DIAG_MSG_BYTES; attr + 4 <= at + size; ) {
    const length = view.getUint16(attr, true);
    if (length < 4) break;
    if (view.getUint16(attr + 2, true) === INET_DIAG_CGROUP_ID && length >= 12) owner.cgroupId = view.getBigUint64(attr + 4, true);
    attr += (length + 3) & ~3;
  }
  return owner;
}
