/**
 * Errors the server raises on purpose; the HTTP routes give each kind its
 * status (404, 400, 403, 409, 507, 503) and the CLI prints the message as it stands.
 */
export type ServerErrorKind = "not-found" | "invalid" | "denied" | "conflict" | "storage-full" | "unavailable" | "refused";

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
/**
 * What Nomad's servers refuse with a plain RPC error, which its HTTP API
 * answers with a 500 (a terminal deployment's actions): kept so, since API
 * clients tell these apart from bad input by that status.
 */
export const refused = (message: string) => new ServerError("refused", message);
