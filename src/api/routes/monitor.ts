/**
 * GET /v1/agent/monitor?log_level=&log_json=&plain=: the agent's own log,
 * live, at the asked level (INFO by default) whatever level the agent
 * writes to its output. Lines come in Nomad's formats: hclog's text
 * ("2026-11-24T02:31:02.123Z [INFO]  client: alloc started: alloc_id=..."),
 * or with log_json its JSON ("@level", "@message", "@module",
 * "@timestamp"). Each chunk is a StreamFrame ({"Data": base64}), or raw text
 * with plain=true. The stream ends when the client goes away, or falls
 * MONITOR_MAX_PENDING_LINES behind.
 */
import type { Hono } from "hono";
import * as v from "valibot";
import { LOG_LEVELS, type LogLevel } from "../../lib/log-levels.ts";
import { tapLogs, type Logger } from "../../lib/logger.ts";
import { GoBool } from "../../structs/common.ts";
import { ApiError } from "../errors.ts";
import { liveStream } from "../live-stream.ts";

/** Log lines a monitor may leave unread before it is cut off (Nomad's monitor buffers 512). */
export const MONITOR_MAX_PENDING_LINES = 512;

/** pino's numeric levels, named as hclog names them. */
const HCLOG_LEVELS: Readonly<Record<number, string>> = { 10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARN", 50: "ERROR", 60: "ERROR" };

/** pino's own fields: everything else in a record is a key=value of the message. */
const RECORD_FIELDS = new Set(["level", "time", "hostname", "msg", "name", "component", "v"]);

/** A record's own fields, without pino's (the agent's pid is on every line; a task's pid is kept). */
function extraFields(record: Record_): [string, unknown][] {
  return Object.entries(record).filter(([key, value]) => !RECORD_FIELDS.has(key) && value !== undefined && !(key === "pid" && value === process.pid));
}

interface Record_ {
  level: number;
  time: number;
  msg?: string;
  component?: string;
  name?: string;
  [key: string]: unknown;
}

const render = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/** One pino JSON record as a line of hclog text. */
export function hclogText(record: Record_): string {
  const level = HCLOG_LEVELS[record.level] ?? "INFO";
  const module = record.component ?? record.name ?? "agent";
  const pairs = extraFields(record).map(([key, value]) => `${key}=${render(key === "err" && typeof value === "object" && value ? ((value as { message?: unknown }).message ?? value) : value)}`);
  const message = pairs.length > 0 ? `${record.msg ?? ""}: ${pairs.join(" ")}` : (record.msg ?? "");
  return `${new Date(record.time).toISOString()} [${level}] ${level.length === 4 ? " " : ""}${module}: ${message}\n`;
}

/** One pino JSON record as a line of hclog JSON. */
export function hclogJson(record: Record_): string {
  const extra = Object.fromEntries(extraFields(record));
  return `${JSON.stringify({
    "@level": (HCLOG_LEVELS[record.level] ?? "INFO").toLowerCase(),
    "@message": record.msg ?? "",
    "@module": record.component ?? record.name ?? "agent",
    "@timestamp": new Date(record.time).toISOString(),
    ...extra,
  })}\n`;
}

const MonitorQuery = v.object({
  log_level: v.optional(
    v.pipe(
      v.string(),
      v.transform((level) => level.toUpperCase()),
      v.check((level) => level in LOG_LEVELS),
    ),
    "INFO",
  ),
  log_json: v.optional(GoBool, "false"),
  plain: v.optional(GoBool, "false"),
});

export function monitorRoutes(logger: Logger) {
  return (app: Hono) => {
    app.get("/v1/agent/monitor", (c) => {
      if (c.req.query("node_id") && c.req.query("server_id")) throw new ApiError(400, "Cannot target node and server simultaneously");
      // Nomad reads an empty parameter as an absent one; its CLI sends log_level= when no level is asked for.
      const query = Object.fromEntries(Object.entries(c.req.query()).filter(([, value]) => value !== ""));
      const parsed = v.safeParse(MonitorQuery, query);
      if (!parsed.success) {
        const issue = parsed.issues[0];
        const field = v.getDotPath(issue);
        if (field === "log_level") throw new ApiError(400, `Unknown log level: ${c.req.query("log_level")}`);
        throw new ApiError(400, `Unknown option for ${field === "plain" ? "plain" : "log json"}: ${issue.message}`);
      }
      const { log_level, log_json, plain } = parsed.output;
      const format = log_json ? hclogJson : hclogText;
      const encoder = new TextEncoder();
      const body = liveStream({
        subscribe: (push) =>
          tapLogs(logger, log_level as LogLevel, (line) => {
            let text: string;
            try {
              text = format(JSON.parse(line) as Record_);
            } catch {
              text = line;
            }
            const bytes = encoder.encode(text);
            push(plain ? bytes : encoder.encode(`${JSON.stringify({ Data: Buffer.from(bytes).toString("base64") })}\n`));
          }),
        signal: c.req.raw.signal,
        maxPendingChunks: MONITOR_MAX_PENDING_LINES,
      });
      return c.body(body, 200, { "Content-Type": plain ? "text/plain" : "application/json" });
    });
  };
}
