/**
 * The web UI's route: its files gzipped with the right types and cache
 * headers, index.html for any page URL (so a shared link reloads), a 404 for
 * a missing file, / and /ui sent to /ui/. The real bundle (src/ui/ through
 * Bun's bundler, as build.ts makes it) is checked against its size budget,
 * and the figure printed.
 */
import { describe, expect, test } from "bun:test";
import pino from "pino";
import { gunzipSync, gzipSync } from "node:zlib";
import { createApp } from "../../src/api/app.ts";
import { uiRoutes } from "../../src/api/routes/ui.ts";
import { UI_BUDGET_BYTES } from "../../src/lib/ui-budget.ts";
import { bundleUi } from "../../src/runtime/bun/ui-bundle.ts";
import type { UiFile } from "../../src/runtime/ui-bundle.ts";

const file = (name: string, text: string): UiFile => ({ name, gzip: gzipSync(text) });
const files = [file("index.html", "<!doctype html><title>drover</title>"), file("index-abc123.js", "console.log(1)"), file("index-abc123.css", "body{}")];
const app = createApp(pino({ level: "silent" }), [uiRoutes(async () => files)]);
const get = (path: string, headers: Record<string, string> = { "accept-encoding": "gzip, deflate, br" }) => app.request(path, { headers });

describe("GET /ui/", () => {
  test("/ and /ui redirect to /ui/", async () => {
    for (const path of ["/", "/ui"]) {
      const res = await get(path);
      expect(res.status).toBe(307);
      expect(res.headers.get("location")).toBe("/ui/");
    }
  });

  test("a page URL answers index.html, never cached, with a content security policy", async () => {
    for (const path of ["/ui/", "/ui/jobs", "/ui/jobs/web", "/ui/allocations/0b1c2d3e-aaaa-bbbb-cccc-000000000000", "/ui/clients/x", "/ui/settings/tokens"]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(gunzipSync(new Uint8Array(await res.arrayBuffer())).toString()).toContain("<title>drover</title>");
    }
  });

  test("a built file is served gzipped, typed, cached for good", async () => {
    const res = await get("/ui/index-abc123.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(res.headers.get("cache-control")).toContain("immutable");
    expect(res.headers.get("vary")).toBe("accept-encoding");
    expect(gunzipSync(new Uint8Array(await res.arrayBuffer())).toString()).toBe("console.log(1)");
  });

  test("a client that takes no gzip gets the plain bytes", async () => {
    const res = await get("/ui/index-abc123.css", {});
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(await res.text()).toBe("body{}");
  });

  test("a missing file is a 404, not the page", async () => {
    const res = await get("/ui/index-old999.js");
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("no such file: /ui/index-old999.js");
  });
});

describe("the UI bundle", () => {
  test(`is under its budget of ${UI_BUDGET_BYTES / 1000} KB gzipped, entry and terminal chunk apart`, async () => {
    const bundle = await bundleUi();
    const total = bundle.reduce((sum, f) => sum + f.gzip.length, 0);
    console.log(`web UI: ${bundle.map((f) => `${f.name} ${(f.gzip.length / 1024).toFixed(1)} KiB`).join(", ")}; total ${(total / 1024).toFixed(1)} KiB gzipped of ${UI_BUDGET_BYTES / 1000} KB`);
    expect(total).toBeLessThan(UI_BUDGET_BYTES);
    const html = gunzipSync(bundle.find((f) => f.name === "index.html")!.gzip).toString();
    // Every file index.html names is under /ui/, so it loads from any page URL.
    for (const ref of html.matchAll(/(?:src|href)="([^"]+)"/g)) if (!ref[1]!.startsWith("data:")) expect(ref[1]).toStartWith("/ui/");
    // The terminal loads on demand: its chunk is not in index.html.
    const terminal = bundle.find((f) => f.name.startsWith("xterm-session-"));
    expect(terminal).toBeDefined();
    expect(html).not.toContain(terminal!.name);
  });
});
