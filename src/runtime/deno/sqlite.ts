/** runtime/sqlite.ts on Deno: node:sqlite (see node-sqlite.ts). */
export { openSqlite } from "../node-sqlite.ts";
