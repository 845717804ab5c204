/**
 * The UI's URLs, Nomad's UI's own (so bookmarks carry over), on the
 * browser's history: every page is a real URL that can be shared and
 * reloaded (the agent answers index.html for any /ui/ path), and the back
 * button walks the pages.
 */
import { useEffect, useState } from "preact/hooks";

export type Route =
  | { page: "jobs" }
  | { page: "job"; id: string }
  | { page: "allocation"; id: string }
  | { page: "clients" }
  | { page: "client"; id: string }
  | { page: "agent" }
  | { page: "token" }
  | { page: "not-found"; path: string };

const BASE = "/ui";

/**
 * Nomad's UI's subpages (a job's allocations, versions or deployments tab,
 * an alloc's task and its logs, a client's monitor) land on the page that
 * shows them; a newer Nomad's `<job>@<namespace>` is the job in `default`.
 */
const SUBPAGES: Record<string, readonly string[]> = {
  jobs: ["allocations", "versions", "deployments", "evaluations", "definition", "clients", "services"],
  allocations: ["*"],
  clients: ["monitor"],
};

export function parseRoute(pathname: string): Route {
  const parts = pathname.replace(/\/+$/, "").split("/").slice(1).map(decodeURIComponent);
  if (parts[0] !== "ui") return { page: "not-found", path: pathname };
  const [section, id, ...rest] = parts.slice(1);
  const subpages = section ? (SUBPAGES[section] ?? []) : [];
  const known = rest.length === 0 || subpages.includes("*") || (rest.length === 1 && subpages.includes(rest[0]!));
  if (known) {
    if (section === undefined || (section === "jobs" && id === undefined)) return { page: "jobs" };
    if (section === "jobs" && id) return { page: "job", id: id.replace(/@default$/, "") };
    if (section === "allocations" && id) return { page: "allocation", id };
    if (section === "clients" && id === undefined) return { page: "clients" };
    if (section === "clients" && id) return { page: "client", id };
    if ((section === "agent" || section === "servers") && id === undefined) return { page: "agent" };
    if (section === "settings" && id === "tokens" && rest.length === 0) return { page: "token" };
  }
  return { page: "not-found", path: pathname };
}

export const paths = {
  jobs: () => `${BASE}/jobs`,
  job: (id: string) => `${BASE}/jobs/${encodeURIComponent(id)}`,
  allocation: (id: string) => `${BASE}/allocations/${encodeURIComponent(id)}`,
  clients: () => `${BASE}/clients`,
  client: (id: string) => `${BASE}/clients/${encodeURIComponent(id)}`,
  agent: () => `${BASE}/agent`,
  token: () => `${BASE}/settings/tokens`,
};

const listeners = new Set<() => void>();

export function navigate(path: string): void {
  if (path === location.pathname + location.search) return;
  history.pushState(null, "", path);
  for (const listener of listeners) listener();
  window.scrollTo(0, 0);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname));
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
