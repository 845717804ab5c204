import { createContext } from "preact";
import { useContext, useEffect, useState } from "preact/hooks";
import { describeError } from "../api/client.ts";
import { LOADING_ACCESS, loadAccess, type Access } from "../acl/capabilities.ts";
import { onTokenChange, readToken } from "../acl/token.ts";

export const AccessContext = createContext<Access>(LOADING_ACCESS);

export function useAccess(): Access {
  return useContext(AccessContext);
}

/** The access of the stored token, worked out again whenever the token changes (in any tab). */
export function useTokenAccess(): { access: Access; token: string; error: string | undefined } {
  const [token, setToken] = useState(readToken);
  const [access, setAccess] = useState<Access>(LOADING_ACCESS);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => onTokenChange(() => setToken(readToken())), []);
  useEffect(() => {
    let current = true;
    setAccess(LOADING_ACCESS);
    setError(undefined);
    loadAccess(token !== "").then(
      (next) => current && setAccess(next),
      (err: unknown) => current && setError(describeError(err)),
    );
    return () => {
      current = false;
    };
  }, [token]);
  return { access, token, error };
}
