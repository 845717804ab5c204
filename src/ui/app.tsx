/** The frame of every page: the header with its navigation and the token's state, then the page of the URL. */
import { useEffect } from "preact/hooks";
import { AccessContext, useTokenAccess } from "./hooks/use-access.ts";
import { ALL_NAMESPACES, DEFAULT_NAMESPACE, onLinkClick, paths, useRoute, type Route } from "./router.ts";
import { InNamespace } from "./components/common.tsx";
import { AgentPage } from "./pages/agent.tsx";
import { AllocationPage } from "./pages/allocation.tsx";
import { ClientPage, ClientsPage } from "./pages/client.tsx";
import { JobPage } from "./pages/job.tsx";
import { JobsPage } from "./pages/jobs.tsx";
import { TokenPage } from "./pages/token.tsx";
import type { Access } from "./acl/capabilities.ts";

function title(route: Route): string {
  switch (route.page) {
    case "jobs":
      return "Jobs";
    case "job":
      return `Job ${route.id}`;
    case "allocation":
      return `Allocation ${route.id.slice(0, 8)}`;
    case "clients":
      return "Clients";
    case "client":
      return `Client ${route.id.slice(0, 8)}`;
    case "agent":
      return "Agent";
    case "token":
      return "ACL token";
    case "not-found":
      return "Not found";
  }
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "jobs":
      // All namespaces: "Run a job" runs in default, and each row's actions are judged in its job's namespace.
      return (
        <InNamespace namespace={route.namespace === ALL_NAMESPACES ? DEFAULT_NAMESPACE : route.namespace}>
          <JobsPage key={route.namespace} namespace={route.namespace} />
        </InNamespace>
      );
    case "job":
      return (
        <InNamespace namespace={route.namespace}>
          <JobPage key={`${route.id}@${route.namespace}`} id={route.id} namespace={route.namespace} />
        </InNamespace>
      );
    case "allocation":
      return <AllocationPage key={route.id} id={route.id} />;
    case "clients":
      return <ClientsPage />;
    case "client":
      return <ClientPage key={route.id} id={route.id} />;
    case "agent":
      return <AgentPage />;
    case "token":
      return <TokenPage />;
    case "not-found":
      return (
        <div class="page-head">
          <h1>No such page</h1>
          <p>
            Nothing lives at <span class="mono">{route.path}</span>. <a href={paths.jobs()}>Go to the jobs</a>.
          </p>
        </div>
      );
  }
}

function tokenChip(access: Access, error: string | undefined): { text: string; tone: string } {
  if (error) return { text: "token: error", tone: "bad" };
  switch (access.mode) {
    case "loading":
      return { text: "token…", tone: "done" };
    case "acl-disabled":
      return { text: "ACLs off", tone: "done" };
    case "management":
      return { text: access.token?.Name || "management", tone: "good" };
    case "client":
      return { text: access.token?.Name || "client token", tone: "good" };
    case "anonymous":
      return { text: "no token", tone: "wait" };
    case "unknown-token":
      return { text: "unknown token", tone: "bad" };
  }
}

const NAV: { label: string; href: string; pages: Route["page"][] }[] = [
  { label: "Jobs", href: paths.jobs(), pages: ["jobs", "job", "allocation"] },
  { label: "Clients", href: paths.clients(), pages: ["clients", "client"] },
  { label: "Agent", href: paths.agent(), pages: ["agent"] },
];

export function App() {
  const route = useRoute();
  const { access, token, error } = useTokenAccess();
  const chip = tokenChip(access, error);

  useEffect(() => {
    document.title = `${title(route)} · drover`;
  }, [route]);

  return (
    <AccessContext.Provider value={access}>
      <div onClick={onLinkClick}>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href={paths.jobs()}>
            drover
          </a>
          <nav aria-label="Main">
            {NAV.map((item) => (
              <a key={item.href} href={item.href === paths.jobs() && "namespace" in route ? paths.jobs(route.namespace) : item.href} aria-current={item.pages.includes(route.page) ? "page" : undefined}>
                {item.label}
              </a>
            ))}
          </nav>
          <a class={`token-chip tone-${chip.tone}`} href={paths.token()} aria-current={route.page === "token" ? "page" : undefined} title={error ?? "The ACL token this browser sends"}>
            {chip.text}
          </a>
        </header>
        <main id="main" tabIndex={-1} key={token}>
          <Page route={route} />
        </main>
      </div>
    </AccessContext.Provider>
  );
}
