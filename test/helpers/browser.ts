/**
 * A real browser for the UI's tests and benches: Debian's Chromium, driven
 * by playwright-core, headless, with a fresh profile that close() removes, and
 * every console error and uncaught page error recorded so a test can fail
 * on them.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

/** Why the browser tests cannot run here, or undefined when they can. */
export const browserMissing: string | undefined = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is absent (apt-get install chromium)`;

/** Chromium's flags for a quiet, self-contained headless run: no GPU, no sandbox (root in CI), no calls home. */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface ConsoleProblem {
  page: string;
  text: string;
}

export interface TestBrowser {
  context: BrowserContext;
  /** Console errors and page errors so far, but for those `allow` let through. */
  problems: ConsoleProblem[];
  /** Runs `fn` with console errors matching `pattern` expected rather than counted. */
  allowing<T>(pattern: RegExp, fn: () => Promise<T>): Promise<T>;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/**
 * Starts Chromium with a fresh profile (user data dir) of its own. The
 * profile is not put in a caller's dir: Chromium writes to it until it has
 * exited, so a dir removed before close() would be made again and left.
 */
export async function launchBrowser(options: { viewport?: { width: number; height: number } } = {}): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "drover-chromium-profile-"));
  // A persistent context is how Playwright passes a user data dir (--user-data-dir) of one's own.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: options.viewport ?? { width: 1280, height: 900 },
  });
  const problems: ConsoleProblem[] = [];
  const allowed: RegExp[] = [];
  const watch = (page: Page) => {
    page.on("console", (message) => {
      if (message.type() !== "error") return;
      const text = message.text();
      if (!allowed.some((pattern) => pattern.test(text))) problems.push({ page: page.url(), text });
    });
    page.on("pageerror", (error) => problems.push({ page: page.url(), text: `uncaught: ${error.message}` }));
  };
  for (const page of context.pages()) watch(page);
  context.on("page", watch);
  return {
    context,
    problems,
    async allowing(pattern, fn) {
      allowed.push(pattern);
      try {
        return await fn();
      } finally {
        allowed.splice(allowed.indexOf(pattern), 1);
      }
    },
    async newPage() {
      const existing = context.pages().find((page) => page.url() === "about:blank");
      return existing ?? (await context.newPage());
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
