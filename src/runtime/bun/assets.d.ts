/**
 * Files imported `with { type: "file" }`: Bun embeds them in the compiled
 * executable and the import is their path there (in node_modules when run
 * from source), readable with node:fs.
 */
declare module "*.wasm.gz" {
  const path: string;
  export default path;
}
