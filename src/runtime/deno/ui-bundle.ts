/**
 * runtime/ui-bundle.ts on Deno: Deno has no bundler for the UI, so the agent
 * serves the files `npm run build` left in dist/ui/ of the checkout it runs from.
 */
import { readdirSync, readFileSync } from "node:fs";
import { uiNameOf, type UiFile } from "../contract/ui-bundle.ts";

const BUILT = new URL("../../../dist/ui/", import.meta.url).pathname;

let read: Promise<UiFile[]> | undefined;

export function uiBundle(): Promise<UiFile[]> {
  read ??= (async () => {
    let names: string[];
    try {
      names = readdirSync(BUILT);
    } catch {
      throw new Error(`the web UI is not built (no ${BUILT}): run \`npm run build\` first`);
    }
    return names.flatMap((entry) => {
      const name = uiNameOf(entry);
      return name === undefined ? [] : [{ name, gzip: new Uint8Array(readFileSync(BUILT + entry)) }];
    });
  })();
  read.catch(() => (read = undefined));
  return read;
}
