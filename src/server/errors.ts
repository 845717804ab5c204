/**
 * Errors the server raises on purpose; the HTTP routes give each kind its
 * status (404, 400, 403, 409, 507, 503) and the CLI prints the message as it stands.
 */
export type ServerErrorKind = "not-found" | "invalid" | "denied" | "conflict" | "storage-full" | "unavailable";

export class ServerError extends Error {
  override name = "ServerError";
  constructor(
    readonly kind: ServerErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new ServerError("not-found", `${what} not found`);
export const invalid = (message: string) => new ServerError("invalid", message);
