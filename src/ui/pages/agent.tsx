/** /ui/agent: the agent's version, the health of each of its parts, its log pump, where it keeps its data. */
import { useEffect, useState } from "preact/hooks";
import { authHeaders, describeError, getJson, parseAnswer } from "../api/client.ts";
import { AgentHealthSchema, AgentSelfSchema, type AgentSelf } from "../api/shapes.ts";
import { pause, whenVisible } from "../api/visibility.ts";
import { ErrorBanner, KeyValues, Loading, Section, StatusBadge, Table } from "../components/common.tsx";
import type * as v from "valibot";

/** How often the page reads the agent again: health changes are rare, a few seconds late is fine. */
const AGENT_REFRESH_MS = 5_000;

type Health = v.InferOutput<typeof AgentHealthSchema>;

/** /v1/agent/health answers 500 with the same body when a part is unhealthy: both are answers. */
async function readHealth(signal: AbortSignal): Promise<Health> {
  const response = await fetch("/v1/agent/health", { headers: authHeaders(), signal });
  if (response.status !== 200 && response.status !== 500) throw new Error(`${response.status}: ${(await response.text()).trim()}`);
  return parseAnswer(AgentHealthSchema, "/v1/agent/health", await response.json());
}

function seconds(text: string | undefined): string {
  const total = Number(text ?? "0");
  if (!Number.isFinite(total) || total <= 0) return "—";
  const d = Math.floor(total / 86_400);
  const h = Math.floor((total % 86_400) / 3600);
  const m = Math.floor((total % 3600) / 60);
  return [d ? `${d}d` : "", h ? `${h}h` : "", `${m}m`, `${Math.floor(total % 60)}s`].filter(Boolean).join(" ");
}

export function AgentPage() {
  const [self, setSelf] = useState<AgentSelf | undefined>();
  const [health, setHealth] = useState<Health | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    const abort = new AbortController();
    void (async () => {
      while (!abort.signal.aborted) {
        await whenVisible(abort.signal);
        try {
          const [nextSelf, nextHealth] = await Promise.all([getJson("/v1/agent/self", AgentSelfSchema, abort.signal), readHealth(abort.signal)]);
          setSelf(nextSelf);
          setHealth(nextHealth);
          setError(undefined);
        } catch (err) {
          if (!abort.signal.aborted) setError(describeError(err));
        }
        await pause(AGENT_REFRESH_MS, abort.signal);
      }
    })();
    return () => abort.abort();
  }, []);

  const stats = self?.stats ?? {};
  const logmon = stats.logmon;
  return (
    <>
      <div class="page-head">
        <h1>
          <span class="crumb">Agent</span> {self?.member.Name ?? ""}
        </h1>
      </div>
      <ErrorBanner error={error} what="Reading the agent" />
      {!self ? (
        error ? null : <Loading what="the agent" />
      ) : (
        <>
          <Section title="Version">
            <KeyValues
              items={[
                ["Version", stats.agent?.version ?? "—"],
                ["Revision", <span class="mono">{stats.agent?.revision ?? "—"}</span>],
                ["Runtime", stats.runtime?.version ?? "—"],
                ["Uptime", seconds(stats.agent?.uptime_seconds)],
                ["Region / datacenter", `${self.config.Region} / ${self.config.Datacenter}`],
                ["Address", `${self.member.Addr}:${self.member.Port}`],
                ["Data dir", <span class="mono">{self.config.DataDir}</span>],
                ["ACLs", self.config.ACL?.Enabled ? "enabled" : "disabled"],
              ]}
            />
          </Section>
          <Section title="Health" id="health">
            {!health ? (
              <Loading what="health" />
            ) : (
              <Table columns={["Part", "Health", "Message"]}>
                {Object.entries(health).map(([part, entry]) => (
                  <tr key={part} data-part={part}>
                    <td>{part}</td>
                    <td>
                      <StatusBadge status={entry.ok ? "healthy" : "unhealthy"} />
                    </td>
                    <td>{entry.message}</td>
                  </tr>
                ))}
              </Table>
            )}
          </Section>
          <Section title="Log pump" id="logmon">
            {logmon ? (
              <KeyValues items={Object.entries(logmon).map(([key, value]) => [key.replaceAll("_", " "), value])} />
            ) : (
              <p class="muted">This agent does not report its log pump.</p>
            )}
          </Section>
          <Section title="Subsystems">
            {Object.entries(stats)
              .filter(([name]) => name !== "agent" && name !== "logmon")
              .map(([name, values]) => (
                <details key={name}>
                  <summary>{name}</summary>
                  <KeyValues items={Object.entries(values).map(([key, value]) => [key, value])} />
                </details>
              ))}
          </Section>
        </>
      )}
    </>
  );
}
