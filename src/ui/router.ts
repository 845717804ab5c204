/**
 * The UI's URLs, Nomad's UI's own (so bookmarks carry over), on the
 * browser's history: every page is a real URL that can be shared and
 * reloaded (the agent answers index.html for any /ui/ path), and the back
 * button walks the pages.
 */
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { page: "jobs"; namespace: string }
  | { page: "job"; id: string; namespace: string }
  | { page: "allocation"; id: string }
  | { page: "clients" }
  | { page: "client"; id: string }
  | { page: "agent" }
  | { page: "token" }
  | { page: "not-found"; path: string };

const BASE = "/ui";

/** The API's own default: a URL without a namespace means it, as a request without `?namespace=` does. */
export const DEFAULT_NAMESPACE = "default";
/** Every namespace the token may see, in the jobs list (Nomad's "*"). */
export const ALL_NAMESPACES = "*";

/**
 * A job's URL segment, Nomad 1.x's `<id>@<namespace>` (the last "@": an ID
 * may hold one, a namespace name may not), split before decoding so an
 * encoded "@" stays in the ID.
 */
function jobSegment(raw: string, query: string | null): { id: string; namespace: string } {
  const at = raw.lastIndexOf("@");
  if (at < 0) return { id: decodeURIComponent(raw), namespace: query || DEFAULT_NAMESPACE };
  return { id: decodeURIComponent(raw.slice(0, at)), namespace: decodeURIComponent(raw.slice(at + 1)) || DEFAULT_NAMESPACE };
}

/**
 * Nomad's UI's subpages (a job's allocations, versions or deployments tab,
 * an alloc's task and its logs, a client's monitor) land on the page that
 * shows them. The jobs list's namespace is `?namespace=` (`*` for all), as
 * in Nomad's UI; a job's is `<job>@<namespace>` (or an older Nomad's
 * `?namespace=`).
 */
const SUBPAGES: Record<string, readonly string[]> = {
  jobs: ["allocations", "versions", "deployments", "evaluations", "definition", "clients", "services"],
  allocations: ["*"],
  clients: ["monitor"],
};

export function parseRoute(pathname: string, search = ""): Route {
  const raw = pathname.replace(/\/+$/, "").split("/").slice(1);
  const parts = raw.map(decodeURIComponent);
  if (parts[0] !== "ui") return { page: "not-found", path: pathname };
  const [section, id, ...rest] = parts.slice(1);
  const namespace = new URLSearchParams(search).get("namespace");
  const subpages = section ? (SUBPAGES[section] ?? []) : [];
  const known = rest.length === 0 || subpages.includes("*") || (rest.length === 1 && subpages.includes(rest[0]!));
  if (known) {
    if (section === undefined || (section === "jobs" && id === undefined)) return { page: "jobs", namespace: namespace || DEFAULT_NAMESPACE };
    if (section === "jobs" && id) return { page: "job", ...jobSegment(raw[2]!, namespace) };
    if (section === "allocations" && id) return { page: "allocation", id };
    if (section === "clients" && id === undefined) return { page: "clients" };
    if (section === "clients" && id) return { page: "client", id };
    if ((section === "agent" || section === "servers") && id === undefined) return { page: "agent" };
    if (section === "settings" && id === "tokens" && rest.length === 0) return { page: "token" };
  }
  return { page: "not-found", path: pathname };
}

/** Whether a URL names `namespace` at all: the default one (or none given) keeps the URLs of a drover without namespaces. */
const named = (namespace: string) => namespace !== "" && namespace !== DEFAULT_NAMESPACE;

export const paths = {
  jobs: (namespace = DEFAULT_NAMESPACE) => `${BASE}/jobs${named(namespace) ? `?namespace=${encodeURIComponent(namespace)}` : ""}`,
  job: (id: string, namespace = DEFAULT_NAMESPACE) => `${BASE}/jobs/${encodeURIComponent(id)}${named(namespace) ? `@${encodeURIComponent(namespace)}` : ""}`,
  allocation: (id: string) => `${BASE}/allocations/${encodeURIComponent(id)}`,
  clients: () => `${BASE}/clients`,
  client: (id: string) => `${BASE}/clients/${encodeURIComponent(id)}`,
  agent: () => `${BASE}/agent`,
  token: () => `${BASE}/settings/tokens`,
};

const listeners = new Set<() => void>();

/** Goes to `path`; `replace` swaps the current history entry (a correction the back button should skip). */
export function navigate(path: string, replace = false): void {
  if (path === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", path);
  else history.pushState(null, "", path);
  for (const listener of listeners) listener();
  window.scrollTo(0, 0);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname, location.search));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname, location.search));
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return route;
}

/** A click on an in-app link that the app should handle (not a new tab, a download, a modified click). */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element | null)?.closest?.("a");
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  if (anchor.target || anchor.hasAttribute("download") || anchor.origin !== location.origin || !anchor.pathname.startsWith(`${BASE}/`)) return;
  // A link within the page (the skip link) is the browser's to follow.
  if (anchor.hash && anchor.pathname === location.pathname) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
