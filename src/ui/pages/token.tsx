/** /ui/settings/tokens (Nomad's URL): the ACL token this browser sends, and what it may do. */
import { useState } from "preact/hooks";
import { can, CAPABILITY_LABELS, type Access, type Capability } from "../acl/capabilities.ts";
import { readToken, saveToken } from "../acl/token.ts";
import { KeyValues, Section } from "../components/common.tsx";
import { useAccess } from "../hooks/use-access.ts";

const MODE_TEXT: Record<Access["mode"], string> = {
  loading: "Checking the token…",
  "acl-disabled": "ACLs are disabled on this agent: every request is allowed, with or without a token.",
  management: "A management token: it may do everything.",
  client: "A client token: it may do what its policies allow.",
  anonymous: "No token: requests are made with the anonymous policy.",
  "unknown-token": "The agent does not know this token.",
};

export function TokenPage() {
  const access = useAccess();
  const [secret, setSecret] = useState(readToken);
  const [shown, setShown] = useState(false);
  const stored = readToken();
  const secretInput = {
    id: "token-secret",
    class: "mono grow",
    autocomplete: "off",
    spellcheck: false,
    value: secret,
    placeholder: "00000000-0000-0000-0000-000000000000",
    onInput: (event: Event) => setSecret((event.currentTarget as HTMLInputElement).value),
  };
  return (
    <>
      <div class="page-head">
        <h1>ACL token</h1>
      </div>
      <Section title="Token">
        <form
          class="token-form"
          onSubmit={(event) => {
            event.preventDefault();
            saveToken(secret.trim());
          }}
        >
          <label for="token-secret">Secret ID</label>
          <div class="row">
            {shown ? <input type="text" {...secretInput} /> : <input type="password" {...secretInput} />}
            <button type="button" onClick={() => setShown(!shown)} aria-pressed={shown}>
              {shown ? "Hide" : "Show"}
            </button>
            <button type="submit" class="primary">
              Save
            </button>
            <button
              type="button"
              disabled={!stored}
              onClick={() => {
                setSecret("");
                saveToken("");
              }}
            >
              Clear
            </button>
          </div>
          <p class="muted">Kept in this browser only (local storage) and sent to this agent as X-Nomad-Token.</p>
        </form>
      </Section>
      <Section title="What this token may do" id="capabilities">
        <p data-access-mode={access.mode}>{MODE_TEXT[access.mode]}</p>
        {access.note ? <p class="muted">{access.note}</p> : null}
        {access.token ? (
          <KeyValues
            items={[
              ["Name", access.token.Name || "—"],
              ["Accessor", <span class="mono">{access.token.AccessorID}</span>],
              ["Type", access.token.Type],
              ["Policies", access.token.Policies.join(", ") || "—"],
              ["Expires", access.token.ExpirationTime ?? "never"],
            ]}
          />
        ) : null}
        {access.mode === "loading" ? null : (
          <ul class="capabilities">
            {(Object.keys(CAPABILITY_LABELS) as Capability[]).map((capability) => {
              const allowed = can(access, capability);
              return (
                <li key={capability} data-capability={capability} data-allowed={String(allowed)}>
                  <span aria-hidden="true">{allowed === true ? "✓" : allowed === false ? "✗" : "?"}</span> {CAPABILITY_LABELS[capability]}
                  <span class="visually-hidden">{allowed === true ? ": allowed" : allowed === false ? ": not allowed" : ": unknown"}</span>
                </li>
              );
            })}
          </ul>
        )}
      </Section>
    </>
  );
}
