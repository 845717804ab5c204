/**
 * The terminal of an exec session: xterm.js, fitted to its box, wired to
 * Nomad's exec websocket. Loaded only when a terminal opens (its own chunk),
 * so pages without one do not pay for it.
 */
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import { execUrl, openExec } from "../api/exec-socket.ts";

export interface TerminalHandle {
  dispose(): void;
}

export function startTerminal(
  element: HTMLElement,
  target: { allocId: string; namespace: string; task: string; command: string[] },
  theme: { background: string; foreground: string; cursor: string },
  onEnd: (message: string) => void,
): TerminalHandle {
  const terminal = new Terminal({ cursorBlink: true, fontSize: 13, fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", theme, scrollback: 2000 });
  const fit = new FitAddon();
  terminal.loadAddon(fit);
  terminal.open(element);
  fit.fit();
  const session = openExec(execUrl(target, true), { columns: terminal.cols, rows: terminal.rows }, {
    output: (bytes) => terminal.write(bytes),
    exited: (code) => {
      terminal.write(`\r\n[exited with code ${code}]\r\n`);
      onEnd(`exited with code ${code}`);
    },
    closed: (reason) => {
      terminal.write(`\r\n[${reason}]\r\n`);
      onEnd(reason);
    },
  });
  const input = terminal.onData((data) => session.input(data));
  const resize = terminal.onResize(({ cols, rows }) => session.resize(cols, rows));
  const observer = new ResizeObserver(() => fit.fit());
  observer.observe(element);
  terminal.focus();
  return {
    dispose() {
      observer.disconnect();
      input.dispose();
      resize.dispose();
      session.close();
      terminal.dispose();
    },
  };
}
