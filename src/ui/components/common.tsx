/** Small pieces every page uses: status badges, errors, a confirmed action, key/value lists. */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { describeError } from "../api/client.ts";
import { accessIn, can, CAPABILITY_LABELS, type Capability } from "../acl/capabilities.ts";
import { AccessContext, useAccess } from "../hooks/use-access.ts";
import { shortId } from "../format.ts";

const STATUS_TONE: Record<string, string> = {
  running: "good",
  ready: "good",
  complete: "done",
  successful: "good",
  dead: "done",
  pending: "wait",
  starting: "wait",
  initializing: "wait",
  queued: "wait",
  failed: "bad",
  lost: "bad",
  down: "bad",
  stop: "done",
  healthy: "good",
  paused: "wait",
  cancelled: "done",
  unhealthy: "bad",
};

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge tone-${STATUS_TONE[status] ?? "done"}`}>{status || "unknown"}</span>;
}

export function ErrorBanner({ error, what }: { error: Error | string | undefined; what?: string }) {
  if (!error) return null;
  const message = typeof error === "string" ? error : describeError(error);
  return (
    <p class="error-banner" role="alert">
      {what ? `${what}: ` : ""}
      {message}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="loading" aria-busy="true">
      Loading {what}…
    </p>
  );
}

/** A page of one object (an allocation, a client) while it is read, or when reading it failed. */
export function ObjectPending({ kind, id, what, error }: { kind: string; id: string; what: string; error: Error | undefined }) {
  return (
    <>
      <div class="page-head">
        <h1>
          <span class="crumb">{kind}</span> <span class="mono">{shortId(id)}</span>
        </h1>
      </div>
      <ErrorBanner error={error} what={`Reading ${what}`} />
      {error ? null : <Loading what={what} />}
    </>
  );
}

export function Section({ title, id, actions, children }: { title: string; id?: string; actions?: ComponentChildren; children: ComponentChildren }) {
  const headingId = id ? `${id}-heading` : undefined;
  return (
    <section class="panel" id={id} aria-labelledby={headingId}>
      <header class="panel-head">
        <h2 id={headingId}>{title}</h2>
        {actions ? <div class="panel-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

/** A column heading: right-aligned over numbers; `hidden` is read to screen readers only (an actions column). */
export type Column = string | { label: string; num?: boolean; hidden?: boolean };

/** A scrolling table with a heading row; `children` are its body rows. */
export function Table({ columns, class: className, children }: { columns: Column[]; class?: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap">
      <table class={className}>
        <thead>
          <tr>
            {columns.map((column) => {
              const { label, num = false, hidden = false } = typeof column === "string" ? { label: column } : column;
              return (
                <th scope="col" key={label} class={num ? "num" : undefined}>
                  {hidden ? <span class="visually-hidden">{label}</span> : label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

export function KeyValues({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {items.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** What is inside judges the token in `namespace` (a job's, an alloc's): its actions are offered as the token may do them there. */
export function InNamespace({ namespace, children }: { namespace: string; children: ComponentChildren }) {
  return <AccessContext.Provider value={accessIn(useAccess(), namespace)}>{children}</AccessContext.Provider>;
}

/** Why an action is not offered: the token lacks the capability. */
export function deniedTitle(capability: Capability): string {
  return `Your token may not ${CAPABILITY_LABELS[capability]}`;
}

/**
 * A button for an action the token may lack: disabled, saying why, when the
 * token surely lacks `capability`; a second press confirms a destructive one.
 * The agent's answer (a 403 among them) shows beside it.
 */
export function ActionButton({
  label,
  capability,
  confirm,
  run,
  tone,
}: {
  label: string;
  capability: Capability;
  confirm?: string;
  run: () => Promise<unknown>;
  tone?: "danger";
}) {
  const access = useAccess();
  const [state, setState] = useState<"idle" | "confirming" | "busy">("idle");
  const [error, setError] = useState<string | undefined>();
  const allowed = can(access, capability);
  const press = async () => {
    if (confirm && state === "idle") return setState("confirming");
    setState("busy");
    setError(undefined);
    try {
      await run();
    } catch (err) {
      setError(describeError(err));
    }
    setState("idle");
  };
  return (
    <span class="action">
      <button
        type="button"
        class={tone === "danger" ? "danger" : undefined}
        disabled={allowed === false || state === "busy"}
        title={allowed === false ? deniedTitle(capability) : undefined}
        onClick={() => void press()}
        onBlur={() => state === "confirming" && setState("idle")}
      >
        {state === "confirming" ? (confirm ?? label) : label}
      </button>
      {error ? (
        <span class="inline-error" role="alert">
          {error}
        </span>
      ) : null}
    </span>
  );
}

/** Shown instead of a section the token may not see. */
export function Denied({ capability }: { capability: Capability }) {
  return <p class="muted denied">{deniedTitle(capability)}.</p>;
}

/**
 * Which of an alloc's tasks a panel is about: a select when there is a
 * choice, nothing when there is one task. Keeps the choice valid as tasks
 * come and go.
 */
export function TaskPicker({ tasks, task, choose }: { tasks: string[]; task: string; choose: (task: string) => void }) {
  useEffect(() => {
    if (!tasks.includes(task) && tasks[0]) choose(tasks[0]);
  }, [tasks.join("\n")]);
  if (tasks.length < 2) return null;
  return (
    <label>
      Task{" "}
      <select value={task} onChange={(event) => choose(event.currentTarget.value)}>
        {tasks.map((name) => (
          <option key={name}>{name}</option>
        ))}
      </select>
    </label>
  );
}
