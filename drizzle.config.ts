import { defineConfig } from "drizzle-kit";

// `npm run db:generate` writes the SQL for schema changes under
// src/state/client/migrations/, then scripts/embed-migrations.ts embeds it in
// the code so the compiled binary carries its migrations.
export default defineConfig({
  dialect: "sqlite",
  schema: "./src/state/client/schema.ts",
  out: "./src/state/client/migrations",
});
