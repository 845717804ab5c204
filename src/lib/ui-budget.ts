/**
 * The web UI's size budget: every file it is made of, gzipped as served,
 * together. A phone on a slow link should have the whole UI in a second or
 * two; build.ts refuses to build past it and a test prints the figure.
 */
export const UI_BUDGET_BYTES = 250_000;
