import { describe, expect, test } from "bun:test";
import { escapeFilter } from "../../src/cli/alloc/exec-session.ts";

/** What the filter passes on for each typed chunk, and whether "~." closed the session. */
function typed(...chunks: string[]): { sent: string; closed: boolean } {
  let closed = false;
  const filter = escapeFilter("~".charCodeAt(0), () => void (closed = true));
  const sent = chunks.map((chunk) => Buffer.from(filter(Buffer.from(chunk))).toString()).join("");
  return { sent, closed };
}

describe("alloc exec's escape character", () => {
  test('"~." at the start of a line closes; what came before it is still sent', () => {
    expect(typed("ls\r~.")).toEqual({ sent: "ls\r", closed: true });
    expect(typed("~", ".")).toEqual({ sent: "", closed: true });
  });

  test("anywhere but the start of a line, and followed by anything but a dot, it is an ordinary key", () => {
    expect(typed("a~.b")).toEqual({ sent: "a~.b", closed: false });
    expect(typed("~x\r")).toEqual({ sent: "~x\r", closed: false });
    expect(typed("~~.")).toEqual({ sent: "~.", closed: false });
  });
});
