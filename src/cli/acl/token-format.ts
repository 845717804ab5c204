/** A token as Nomad's `acl token` commands print it. */
import type { AclToken, AclTokenStub } from "../../acl/structs.ts";
import type { Io } from "../command.ts";
import { formatKV, orNone } from "../format.ts";

/** Prints one token: Nomad's key = value lines, or JSON with -json. */
export function printToken(io: Io, json: boolean | undefined, token: AclToken): void {
  io.print(json ? JSON.stringify(token, null, 4) : formatToken(token));
}

export function formatToken(token: AclToken): string {
  return formatKV([
    ["Accessor ID", token.AccessorID],
    // Only the answer that created a token, and token self (the caller's own), carry its secret.
    ["Secret ID", token.SecretID || "<hidden>"],
    ["Name", orNone(token.Name)],
    ["Type", token.Type],
    ["Global", String(token.Global)],
    ["Policies", token.Type === "management" ? "n/a" : `[${(token.Policies ?? []).join(" ")}]`],
    ["Create Time", token.CreateTime],
    ["Expiry Time", token.ExpirationTime ?? "<none>"],
    ["Create Index", String(token.CreateIndex)],
    ["Modify Index", String(token.ModifyIndex)],
  ]);
}

export function tokenRow(token: AclTokenStub): string[] {
  return [orNone(token.Name), token.Type, String(token.Global), token.AccessorID, token.ExpirationTime ?? "<none>"];
}

export const TOKEN_HEADER = ["Name", "Type", "Global", "Accessor ID", "Expiry Time"];
