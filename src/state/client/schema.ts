/**
 * The client state database: what must survive a crash of the agent. Each
 * table is added by the migration that introduced it (src/state/client/migrations).
 */
import { sqliteTable, text } from "drizzle-orm/sqlite-core";

/** Facts about the database itself, such as which drover version last opened it. */
export const agentMeta = sqliteTable("agent_meta", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});
