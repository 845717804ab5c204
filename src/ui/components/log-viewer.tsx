/**
 * A task's stdout or stderr, its tail first, then followed live. The view
 * keeps the last MAX_SHOWN_CHARS characters, so a chatty task never makes
 * the page heavy; while following it stays scrolled to the end unless the
 * reader scrolls up. The stream is open only while the view is on screen:
 * a browser shares six connections to the agent among all its tabs, and a
 * page read for its charts should not hold one for logs nobody sees.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { TaskPicker } from "./common.tsx";
import { streamLog } from "../api/log-stream.ts";

/** What the view holds: a few thousand lines, enough to read back through. */
const MAX_SHOWN_CHARS = 256 * 1024;

export interface LogViewerProps {
  allocId: string;
  /** The alloc's: sent as ?namespace=, as on every request of its page. */
  namespace: string;
  tasks: string[];
}

export function LogViewer({ allocId, namespace, tasks }: LogViewerProps) {
  const [task, setTask] = useState(tasks[0] ?? "");
  const [type, setType] = useState<"stdout" | "stderr">("stdout");
  const [follow, setFollow] = useState(true);
  const [error, setError] = useState<string | undefined>();
  const pre = useRef<HTMLPreElement>(null);
  const text = useRef("");
  const stick = useRef(true);
  const [onScreen, setOnScreen] = useState(false);

  useEffect(() => {
    const element = pre.current;
    if (!element) return;
    const observer = new IntersectionObserver((entries) => setOnScreen(entries.some((entry) => entry.isIntersecting)));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);


  useEffect(() => {
    const element = pre.current;
    if (!element || !task || !onScreen) return;
    const abort = new AbortController();
    let frame = 0;
    const paint = () => {
      frame = 0;
      element.textContent = text.current;
      if (stick.current) element.scrollTop = element.scrollHeight;
    };
    const schedule = () => {
      if (frame === 0) frame = requestAnimationFrame(paint);
    };
    text.current = "";
    element.textContent = "";
    element.dataset.streaming = "opening";
    void streamLog({
      allocId,
      namespace,
      task,
      type,
      follow,
      signal: abort.signal,
      reset: () => {
        text.current = "";
        element.dataset.streaming = follow ? "following" : "loaded";
        schedule();
      },
      text: (chunk) => {
        const next = text.current + chunk;
        text.current = next.length > MAX_SHOWN_CHARS ? next.slice(next.length - MAX_SHOWN_CHARS) : next;
        schedule();
      },
      error: setError,
    });
    return () => {
      abort.abort();
      if (frame) cancelAnimationFrame(frame);
    };
  }, [allocId, namespace, task, type, follow, onScreen]);

  const onScroll = () => {
    const element = pre.current;
    if (element) stick.current = element.scrollHeight - element.scrollTop - element.clientHeight < 24;
  };

  return (
    <div class="logs">
      <div class="toolbar" role="toolbar" aria-label="Log view">
        <TaskPicker tasks={tasks} task={task} choose={setTask} />
        <div class="segmented">
          {(["stdout", "stderr"] as const).map((name) => (
            <button type="button" key={name} aria-pressed={type === name} onClick={() => setType(name)}>
              {name}
            </button>
          ))}
        </div>
        <label class="check">
          <input type="checkbox" checked={follow} onChange={(event) => setFollow(event.currentTarget.checked)} /> Follow
        </label>
        {error ? <span class="inline-error" role="status">{error}</span> : null}
      </div>
      <pre class="log-output" ref={pre} tabIndex={0} aria-label={`${task} ${type}`} aria-live="off" onScroll={onScroll} />
    </div>
  );
}
