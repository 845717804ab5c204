/** The keyring's API shapes (Nomad's structs.RootKeyMeta), shared by the server and the CLI. */

/** Nomad's name of the one algorithm its keyring (and drover's) uses. */
export const KEY_ALGORITHM = "aes256-gcm";

/** A root key as Nomad's keyring endpoints describe it: never the key itself. */
export interface RootKeyMeta {
  KeyID: string;
  Algorithm: typeof KEY_ALGORITHM;
  /** Nanoseconds since the epoch, as Nomad's. */
  CreateTime: number;
  CreateIndex: number;
  ModifyIndex: number;
  State: "active" | "inactive";
}
