import { describe, expect, test } from "bun:test";
import { uiUrl } from "../../src/agent/http-listener.ts";

describe("the UI address the agent prints at start", () => {
  test("is the bound address, https with TLS, IPv6 in brackets, and a wildcard bind as this host's loopback", () => {
    expect(uiUrl("127.0.0.1", 4646, false)).toBe("http://127.0.0.1:4646/ui/");
    expect(uiUrl("10.0.0.12", 4646, true)).toBe("https://10.0.0.12:4646/ui/");
    expect(uiUrl("0.0.0.0", 24646, false)).toBe("http://127.0.0.1:24646/ui/");
    expect(uiUrl("::", 4646, false)).toBe("http://[::1]:4646/ui/");
    expect(uiUrl("fd00::12", 4646, true)).toBe("https://[fd00::12]:4646/ui/");
  });
});
