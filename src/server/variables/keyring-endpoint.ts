/**
 * Nomad's keyring operations (nomad/keyring_endpoint.go), on the agent's
 * one keyring:
 *
 *   list()          every kept key's metadata, the active one "active"
 *   rotate(full)    a new active key: new identities and variable writes use
 *                   it; old keys stay, so running tasks' tokens still verify
 *                   and old variables still decrypt. full: every variable is
 *                   re-encrypted with the new key now (Nomad does it in a
 *                   core job; drover's state is one process, so it is done
 *                   before the answer)
 *   remove(id)      forgets an inactive key; refused for the active key
 *                   (Nomad's error) and, unlike Nomad 1.6, while variables
 *                   are still encrypted with it: they would be lost for good
 */
import { refused } from "../errors.ts";
import type { VariablesEndpoint } from "./endpoint.ts";
import type { Keyring } from "./keyring.ts";
import type { RootKeyMeta } from "../../structs/keyring.ts";

export class KeyringEndpoint {
  constructor(
    private readonly keyring: Keyring,
    private readonly variables: VariablesEndpoint,
  ) {}

  get index(): number {
    return this.keyring.index;
  }

  list(): RootKeyMeta[] {
    return this.keyring.list();
  }

  rotate(full: boolean): { Key: RootKeyMeta; Index: number } {
    const key = this.keyring.rotate();
    if (full) this.variables.rekey();
    return { Key: key, Index: this.keyring.index };
  }

  /** Nomad answers a key it does not have as done. */
  remove(keyId: string): { Index: number } {
    if (keyId === this.keyring.activeKeyId) throw refused("active root key cannot be deleted - call rotate first");
    if (this.keyring.has(keyId)) {
      const sealed = this.variables.sealedWith(keyId);
      if (sealed > 0) {
        throw refused(`root key ${keyId} still encrypts ${sealed === 1 ? "1 variable" : `${sealed} variables`}: rotate with full=true first, or they could never be read again`);
      }
      this.keyring.remove(keyId);
    }
    return { Index: this.keyring.index };
  }
}
