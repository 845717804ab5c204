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
 *                   (Nomad's error) and, as Nomad 1.9 does, while it is in
 *                   use: variables are still encrypted with it (they would
 *                   be lost for good) or it signed a live allocation's
 *                   tokens (its tasks would be locked out); force removes
 *                   it anyway
 */
import { refused } from "../errors.ts";
import type { WorkloadIdentities } from "../identity/workload-identity.ts";
import type { VariablesEndpoint } from "./endpoint.ts";
import type { Keyring } from "./keyring.ts";
import type { RootKeyMeta } from "../../structs/keyring.ts";

export class KeyringEndpoint {
  constructor(
    private readonly keyring: Keyring,
    private readonly variables: VariablesEndpoint,
    private readonly identities: WorkloadIdentities,
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
  remove(keyId: string, force: boolean): { Index: number } {
    if (keyId === this.keyring.activeKeyId) throw refused("active root key cannot be deleted - call rotate first");
    if (this.keyring.has(keyId)) {
      const uses = force ? [] : this.usesOf(keyId);
      if (uses.length > 0) throw refused(`root key in use, cannot delete: ${uses.join("; ")}`);
      this.keyring.remove(keyId);
    }
    return { Index: this.keyring.index };
  }

  /** What still needs key `keyId`, and how to free it. */
  private usesOf(keyId: string): string[] {
    const uses: string[] = [];
    const sealed = this.variables.sealedWith(keyId);
    if (sealed > 0) uses.push(`it encrypts ${plural(sealed, "variable")} (rotate with full=true to re-encrypt them)`);
    const holders = this.identities.holdersOf(keyId).length;
    if (holders > 0) uses.push(`it signed the workload identities of ${plural(holders, "running allocation")} (kept until they stop)`);
    return uses;
  }
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;
