/** The `drover executor` role. Placeholder until its issue lands; the agent never starts it yet. */
export async function main(_argv: readonly string[]): Promise<number> {
  console.error("drover executor: not available in this build");
  return 1;
}
