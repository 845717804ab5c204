/**
 * The node's unique ID: made once, kept in `client-id` in the client's state
 * dir (Nomad's file name and place) so a restarted agent is the same node.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../runtime/fs.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function loadOrCreateNodeId(clientDir: string): string {
  const dir = clientDir;
  const path = join(dir, "client-id");
  try {
    const existing = readFileSync(path, "utf8").trim();
    if (UUID.test(existing)) return existing;
    throw new Error(`${path} does not hold a node ID ("${existing.slice(0, 40)}"); remove it to get a new one`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = randomUUID();
  writeFileAtomic(path, `${id}\n`, 0o600);
  return id;
}
