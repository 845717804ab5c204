import { defineConfig } from "drizzle-kit";

// The embedded server's state database; `npm run db:generate` runs this after
// drizzle.config.ts (the client's) and embeds both migration folders.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/state/server/schema.ts",
  out: "./src/state/server/migrations",
});
