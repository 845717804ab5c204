/**
 * A command at a pseudo-terminal, for tests of interactive sessions: what it
 * prints, keys typed at it, window resizes. Driven through pty-driver.py (Python's
 * pty module), so the terminal is as real as a person's; where python3 is
 * missing, `terminalUnavailable` says so and tests skip.
 */
import { afterAll } from "bun:test";
import { join } from "node:path";
import { waitFor } from "./index.ts";

const PTY_DRIVER = join(import.meta.dir, "pty-driver.py");
const python = Bun.which("python3");

/** Why terminal tests cannot run here, or null. */
export const terminalUnavailable: string | null = python ? null : "python3 is not installed (pty-driver.py drives the terminal)";

export interface Terminal {
  /** Everything the command wrote to the terminal so far. */
  output(): string;
  type(text: string): void;
  resize(rows: number, cols: number): void;
  /** Waits until the output matches. */
  waitFor(what: string, pattern: RegExp): Promise<void>;
  /** The command's exit status. */
  readonly exited: Promise<number>;
}

export function onTerminal(argv: readonly string[], size: { rows: number; cols: number }, env: Record<string, string | undefined>): Terminal {
  const proc = Bun.spawn([python!, PTY_DRIVER, String(size.rows), String(size.cols), ...argv], { env, stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  afterAll(() => proc.kill("SIGKILL"));
  let output = "";
  const decoder = new TextDecoder();
  const reading = (async () => {
    const reader = proc.stdout.getReader();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) output += decoder.decode(chunk.value, { stream: true });
  })();
  const send = (line: string) => {
    proc.stdin.write(`${line}\n`);
    proc.stdin.flush();
  };
  return {
    output: () => output,
    type: (text) => send(`type ${Buffer.from(text).toString("base64")}`),
    resize: (rows, cols) => send(`resize ${rows} ${cols}`),
    waitFor: async (what, pattern) => {
      try {
        await waitFor(what, () => pattern.test(output));
      } catch (err) {
        throw new Error(`${(err as Error).message}; the terminal shows ${JSON.stringify(output.slice(-400))}`);
      }
    },
    exited: reading.then(() => proc.exited),
  };
}
