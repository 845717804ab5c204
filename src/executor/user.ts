/**
 * The identity a task runs as (Nomad's `user`): a name or uid looked up in
 * the host's /etc/passwd, its primary group as gid.
 */
import { readTextFile } from "../runtime/libc.ts";

export interface Identity {
  uid: number;
  gid: number;
}

export function lookupUser(user: string, passwd = "/etc/passwd"): Identity {
  let text: string;
  try {
    text = readTextFile(passwd);
  } catch (err) {
    throw new Error(`user "${user}": cannot read ${passwd}: ${(err as Error).message}`);
  }
  for (const line of text.split("\n")) {
    const [name, , uid, gid] = line.split(":");
    if (uid === undefined || gid === undefined) continue;
    if (name === user || uid === user) return { uid: Number(uid), gid: Number(gid) };
  }
  throw new Error(`user "${user}": no such user in ${passwd}`);
}
