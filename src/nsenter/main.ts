/** The `drover nsenter` role. Placeholder until its issue lands; the agent never starts it yet. */
export async function main(_argv: readonly string[]): Promise<number> {
  console.error("drover nsenter: not available in this build");
  return 1;
}
