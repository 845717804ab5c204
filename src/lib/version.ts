/**
 * The version and commit this program was built from. build.ts defines the
 * two constants; running from source they read as the package version and
 * "dev".
 */
import pkg from "../../package.json" with { type: "json" };

declare const DROVER_BUILD_VERSION: string | undefined;
declare const DROVER_BUILD_COMMIT: string | undefined;

export const VERSION: string = typeof DROVER_BUILD_VERSION === "string" ? DROVER_BUILD_VERSION : pkg.version;
export const COMMIT: string = typeof DROVER_BUILD_COMMIT === "string" ? DROVER_BUILD_COMMIT : "dev";

/** "drover v0.1.0 (abc1234)" */
export function versionLine(): string {
  return `drover v${VERSION} (${COMMIT})`;
}
