/**
 * The server's keyring: the root key Variables are encrypted with, kept in
 * `<data_dir>/server/keystore/<key id>.json` (mode 0600), never in the state
 * database beside the data it protects (Nomad keeps its keystore the same
 * way). A copy of state.db alone reads no variable.
 *
 *   encrypt(text) ──> AES-256-GCM under the active key, a fresh 96-bit nonce
 *                     ──> { keyId, data: base64(nonce | ciphertext | tag) }
 *   decrypt(keyId, data) ──> the key by id ──> the text (a tampered blob fails)
 *
 * The active key is the newest in the keystore; older keys stay readable, so
 * a key added later (rotation) never strands what the old one wrote, and a
 * task's identity signed before it still verifies. remove() drops an
 * inactive key's file for good (Nomad's DELETE /v1/operator/keyring/key/:id).
 *
 * Each root key also signs workload identities (Nomad signs them with the
 * same keyring): an Ed25519 key derived from it (HKDF, so the signing key is
 * never the encryption key itself), named by the root key's ID (a JWT's
 * `kid`). A token signed by an older key verifies as long as that key is kept.
 */
import { createCipheriv, createDecipheriv, createPrivateKey, createPublicKey, hkdfSync, randomBytes, randomUUID, sign, verify, type KeyObject } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as v from "valibot";
import { KEY_ALGORITHM, type RootKeyMeta } from "../../structs/keyring.ts";

const ALGORITHM = "aes-256-gcm";
const KEY_BYTES = 32;
/** GCM's standard nonce length. */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Owner read/write only: the key is the variables' secret. */
const KEY_FILE_MODE = 0o600;
const KEYSTORE_DIR_MODE = 0o700;

const KeyFileSchema = v.object({
  KeyID: v.string(),
  /** base64 of the 32 key bytes. */
  Key: v.string(),
  /** Milliseconds since the epoch: the newest key is the active one. */
  CreateTime: v.number(),
  /** The keyring's index when the key was made (absent in keys written before rotation existed). */
  CreateIndex: v.optional(v.number(), 1),
});

interface RootKey {
  id: string;
  key: Buffer;
  createTime: number;
  createIndex: number;
}

const NANOS_PER_MILLI = 1_000_000;

/** The HKDF context that derives a root key's signing key. */
const SIGNING_KEY_INFO = "drover workload identity signing key";
/** PKCS#8 DER of an Ed25519 private key, up to its 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");

/** A root key's public signing key as a JWK (what /.well-known/jwks.json lists). */
export interface SigningJwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  use: "sig";
  alg: "EdDSA";
}

export interface Sealed {
  keyId: string;
  data: string;
}

export class Keyring {
  private readonly keys = new Map<string, RootKey>();
  private readonly signingKeys = new Map<string, KeyObject>();
  private active: RootKey;
  private lastIndex = 0;

  /** Loads `<dir>`'s keys, making the first one when there is none. */
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true, mode: KEYSTORE_DIR_MODE });
    for (const name of readdirSync(dir)) {
      if (!name.endsWith(".json")) continue;
      const where = join(dir, name);
      const parsed = v.safeParse(KeyFileSchema, JSON.parse(readFileSync(where, "utf8")));
      if (!parsed.success) throw new Error(`keystore file ${where} is not a drover root key`);
      const key = Buffer.from(parsed.output.Key, "base64");
      if (key.length !== KEY_BYTES) throw new Error(`keystore file ${where}: the key is ${key.length} bytes, not ${KEY_BYTES}`);
      const { KeyID: id, CreateTime: createTime, CreateIndex: createIndex } = parsed.output;
      this.keys.set(id, { id, key, createTime, createIndex });
      this.lastIndex = Math.max(this.lastIndex, createIndex);
    }
    this.active = this.newest() ?? this.makeKey();
  }

  /** The index of the keyring's last change (Nomad's X-Nomad-Index of its keyring endpoints). */
  get index(): number {
    return Math.max(1, this.lastIndex);
  }

  /** Every kept key's metadata, oldest first. */
  list(): RootKeyMeta[] {
    return [...this.keys.values()]
      .sort((a, b) => a.createTime - b.createTime)
      .map((root) => ({
        KeyID: root.id,
        Algorithm: KEY_ALGORITHM,
        CreateTime: root.createTime * NANOS_PER_MILLI,
        CreateIndex: root.createIndex,
        ModifyIndex: root.createIndex,
        State: root === this.active ? "active" : "inactive",
      }));
  }

  has(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  /**
   * Forgets an inactive key: what it sealed no longer decrypts and what it
   * signed no longer verifies. The caller checks that nothing still needs it.
   */
  remove(keyId: string): void {
    if (keyId === this.active.id) throw new Error(`key ${keyId} is the active key`);
    if (!this.keys.delete(keyId)) return;
    this.signingKeys.delete(keyId);
    rmSync(join(this.dir, `${keyId}.json`), { force: true });
    this.lastIndex += 1;
  }

  get activeKeyId(): string {
    return this.active.id;
  }

  /** A new active key; the old ones still decrypt what they sealed and verify what they signed. */
  rotate(): RootKeyMeta {
    this.active = this.makeKey();
    return this.list().find((meta) => meta.KeyID === this.active.id)!;
  }

  /** A new key, written to the keystore before anything uses it. */
  private makeKey(): RootKey {
    // Never older than the active key, even if the clock stepped back: the newest is the active one on the next load.
    const createTime = Math.max(Date.now(), (this.newest()?.createTime ?? 0) + 1);
    const key: RootKey = { id: randomUUID(), key: randomBytes(KEY_BYTES), createTime, createIndex: this.lastIndex + 1 };
    const file = join(this.dir, `${key.id}.json`);
    const text = JSON.stringify({ KeyID: key.id, Key: key.key.toString("base64"), CreateTime: key.createTime, CreateIndex: key.createIndex });
    writeFileSync(`${file}.tmp`, text, { mode: KEY_FILE_MODE });
    renameSync(`${file}.tmp`, file);
    this.keys.set(key.id, key);
    this.lastIndex = key.createIndex;
    return key;
  }

  encrypt(plaintext: string): Sealed {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.active.key, nonce);
    const sealed = Buffer.concat([nonce, cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return { keyId: this.active.id, data: sealed.toString("base64") };
  }

  decrypt({ keyId, data }: Sealed): string {
    const root = this.keys.get(keyId);
    if (!root) throw new Error(`no key ${keyId} in the keystore ${this.dir}: the variable cannot be decrypted`);
    const sealed = Buffer.from(data, "base64");
    const decipher = createDecipheriv(ALGORITHM, root.key, sealed.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]).toString("utf8");
  }

  /** Signs `payload` with the active key's signing key (Ed25519). */
  sign(payload: string): { keyId: string; signature: Buffer } {
    return { keyId: this.active.id, signature: sign(null, Buffer.from(payload), this.signingKey(this.active)) };
  }

  /** Whether `signature` is `payload` signed by key `keyId` (false for a key not in the keystore). */
  verify(keyId: string, payload: string, signature: Buffer): boolean {
    const root = this.keys.get(keyId);
    if (!root) return false;
    return verify(null, Buffer.from(payload), createPublicKey(this.signingKey(root)), signature);
  }

  /** Every kept key's public signing key, the active one first. */
  publicJwks(): SigningJwk[] {
    const roots = [this.active, ...[...this.keys.values()].filter((key) => key !== this.active)];
    return roots.map((root) => {
      const jwk = createPublicKey(this.signingKey(root)).export({ format: "jwk" });
      return { kty: String(jwk.kty), crv: String(jwk.crv), x: String(jwk.x), kid: root.id, use: "sig", alg: "EdDSA" };
    });
  }

  private signingKey(root: RootKey): KeyObject {
    let key = this.signingKeys.get(root.id);
    if (!key) {
      const seed = Buffer.from(hkdfSync("sha256", root.key, Buffer.alloc(0), SIGNING_KEY_INFO, KEY_BYTES));
      key = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
      this.signingKeys.set(root.id, key);
    }
    return key;
  }

  private newest(): RootKey | undefined {
    let newest: RootKey | undefined;
    for (const key of this.keys.values()) if (!newest || key.createTime > newest.createTime) newest = key;
    return newest;
  }
}
