/**
 * An exec session into one of the alloc's running tasks, in a terminal on
 * the page: a task, a command (a shell by default), then Open.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { TaskPicker } from "./common.tsx";
import type { TerminalHandle } from "./xterm-session.ts";

export interface ExecTerminalProps {
  allocId: string;
  /** The alloc's: sent as ?namespace=, as on every request of its page. */
  namespace: string;
  tasks: string[];
}

/** Splits a command line on blanks; quotes keep blanks inside one argument. */
export function splitCommand(line: string): string[] {
  const args: string[] = [];
  const pattern = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (const match of line.matchAll(pattern)) args.push(match[1] ?? match[2] ?? match[3] ?? "");
  return args;
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

export function ExecTerminal({ allocId, namespace, tasks }: ExecTerminalProps) {
  const [task, setTask] = useState(tasks[0] ?? "");
  const [command, setCommand] = useState("/bin/sh");
  const [status, setStatus] = useState<"idle" | "loading" | "open" | "ended">("idle");
  const [message, setMessage] = useState("");
  const box = useRef<HTMLDivElement>(null);
  const handle = useRef<TerminalHandle | null>(null);

  useEffect(() => () => handle.current?.dispose(), []);

  const open = async () => {
    const args = splitCommand(command);
    if (args.length === 0 || !box.current) return;
    handle.current?.dispose();
    box.current.textContent = "";
    setStatus("loading");
    setMessage("");
    try {
      const { startTerminal } = await import("./xterm-session.ts");
      const theme = { background: cssVar("--term-bg"), foreground: cssVar("--term-fg"), cursor: cssVar("--term-fg") };
      handle.current = startTerminal(box.current, { allocId, namespace, task, command: args }, theme, (end) => {
        setStatus("ended");
        setMessage(end);
      });
      setStatus("open");
    } catch (err) {
      setStatus("ended");
      setMessage(err instanceof Error ? err.message : String(err));
    }
  };

  const close = () => {
    handle.current?.dispose();
    handle.current = null;
    setStatus("ended");
    setMessage("closed");
  };

  return (
    <div class="exec">
      <form
        class="toolbar"
        onSubmit={(event) => {
          event.preventDefault();
          void open();
        }}
      >
        <TaskPicker tasks={tasks} task={task} choose={setTask} />
        <label class="grow">
          Command <input class="mono" value={command} onInput={(event) => setCommand(event.currentTarget.value)} spellcheck={false} autocomplete="off" />
        </label>
        <button type="submit" class="primary" disabled={!task || status === "loading"}>
          {status === "open" ? "Reopen" : "Open terminal"}
        </button>
        {status === "open" ? (
          <button type="button" onClick={close}>
            Close
          </button>
        ) : null}
        <span class="muted" role="status">
          {status === "open" ? `connected to ${task}` : message}
        </span>
      </form>
      <div class="exec-screen" ref={box} data-status={status} />
    </div>
  );
}
