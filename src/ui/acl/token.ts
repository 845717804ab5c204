/**
 * The ACL token the UI sends, kept in the browser's localStorage under the
 * key Nomad's own UI uses, so a page reload, a new tab and a shared link
 * keep it. Listeners hear a change in this tab and in others.
 */
const STORAGE_KEY = "nomadTokenSecret";

const listeners = new Set<() => void>();

export function readToken(): string {
  try {
    return localStorage.getItem(STORAGE_KEY) ?? "";
  } catch {
    return "";
  }
}

export function saveToken(secret: string): void {
  if (secret) localStorage.setItem(STORAGE_KEY, secret);
  else localStorage.removeItem(STORAGE_KEY);
  for (const listener of listeners) listener();
}

export function onTokenChange(listener: () => void): () => void {
  listeners.add(listener);
  const fromOtherTab = (event: StorageEvent) => {
    if (event.key === STORAGE_KEY) listener();
  };
  window.addEventListener("storage", fromOtherTab);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("storage", fromOtherTab);
  };
}
