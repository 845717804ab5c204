/**
 * The HTTP API: Nomad's paths and JSON field names under /v1. Each route
 * module gets only the dependencies it needs. Errors are Nomad's: the
 * message as a plain-text body with the status (Nomad's clients print it as
 * "Unexpected response code: 404 (job "x" not found)"); a bug becomes a 500
 * whose details go to the log, never to the client.
 *
 * Every route has an ACL rule (acl/route-rules.ts): the app refuses to be
 * made with one that lacks it, whether ACLs are on or not. With `acl`, the
 * guard (acl/guard.ts) judges each request by its rule before the route runs.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { BYTES_PER_MIB } from "../lib/units.ts";
import { HclSyntaxError } from "../lib/hcl.ts";
import type { Logger } from "../lib/logger.ts";
import { ValidationError } from "../lib/validation.ts";
import { aclGuard, type AclGuardOptions } from "./acl/guard.ts";
import { bindRouteRules, ROUTE_RULES, type RouteRule } from "./acl/route-rules.ts";
import { ApiError, ClientGoneError } from "./errors.ts";

export type Routes = (app: Hono) => void;

/**
 * A request whose client closed the connection before it was answered: its
 * body could not be read (body.ts), or the runtime aborted its signal (Bun
 * does as the connection closes).
 */
function clientWentAway(err: unknown, request: AbortSignal): boolean {
  return err instanceof ClientGoneError || request.aborted;
}

/**
 * The largest request body: a job with large embedded templates is a few
 * hundred KiB; a bigger body is refused before it is read, so no request
 * can make the agent hold an unbounded body in memory.
 */
export const MAX_BODY_BYTES = 16 * BYTES_PER_MIB;

export interface AppOptions {
  /** Run before any route (task-access.ts), in order, before the ACL check and before a body is read. */
  guards?: readonly MiddlewareHandler[];
  /** ACLs enabled: who resolves tokens, and who hears of refusals. */
  acl?: AclGuardOptions;
  /** Each route's ACL rule (default: acl/route-rules.ts); tests add rows for routes of their own. */
  routeRules?: readonly RouteRule[];
}

export function createApp(logger: Logger, routes: readonly Routes[], options: AppOptions = {}): Hono {
  const app = new Hono();
  // Nomad logs every request at DEBUG; `nomad monitor -log-level=DEBUG` shows them.
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    logger.debug(
      { component: "http", method: c.req.method, path: c.req.path, status: c.res.status, duration_ms: Math.round((performance.now() - started) * 1000) / 1000 },
      "request complete",
    );
  });
  for (const guard of options.guards ?? []) app.use(guard);
  let rules: ReturnType<typeof bindRouteRules> = new Map();
  if (options.acl) app.use(aclGuard(() => rules, options.acl));
  app.use(bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => c.text(`request body is larger than ${MAX_BODY_BYTES} bytes`, 413) }));
  const firstRoute = app.routes.length;
  for (const mount of routes) mount(app);
  rules = bindRouteRules(app.routes.slice(firstRoute), options.routeRules ?? ROUTE_RULES);
  app.notFound((c) => c.text(`no such endpoint: ${c.req.method} ${c.req.path}`, 404));
  app.onError((err, c) => {
    if (err instanceof ApiError) return c.text(err.message, err.status);
    if (err instanceof ValidationError) return c.text(err.message, 400);
    // A job file's syntax error (POST /v1/jobs/parse) names the line and column.
    if (err instanceof HclSyntaxError) return c.text(err.message, 400);
    if (clientWentAway(err, c.req.raw.signal)) {
      // Nobody reads this answer; the runtime's exception object would only bury the line.
      logger.info({ method: c.req.method, path: c.req.path, reason: (err as Error).message }, "the client closed the connection before the request was read");
      return c.text("the client closed the connection", 400);
    }
    logger.error({ err, method: c.req.method, path: c.req.path }, "request failed");
    return c.text("internal error; the agent log has the details", 500);
  });
  return app;
}
