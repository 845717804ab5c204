/**
 * The node's identity: its ID and its SecretID, each made once and kept in
 * the client's state dir (`client-id`, `secret-id`: Nomad's file names and
 * place), so a restarted agent is the same node. A Nomad server refuses a
 * node that re-registers with another SecretID; a new ID would leave the old
 * node to go down and its allocs to run twice.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../../runtime/fs.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function loadOrCreateNodeId(clientDir: string): string {
  return loadOrCreateUuid(clientDir, "client-id", "a node ID");
}

/** The secret a Nomad server knows the node by; never shown in the API. */
export function loadOrCreateSecretId(clientDir: string): string {
  return loadOrCreateUuid(clientDir, "secret-id", "a node secret ID");
}

function loadOrCreateUuid(dir: string, file: string, what: string): string {
  const path = join(dir, file);
  try {
    const existing = readFileSync(path, "utf8").trim();
    if (UUID.test(existing)) return existing;
    throw new Error(`${path} does not hold ${what}; remove it to get a new one`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const id = randomUUID();
  writeFileAtomic(path, `${id}\n`, 0o600);
  return id;
}
