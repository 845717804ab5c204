/** Errors a route throws on purpose; the app answers each with its message as plain text and its status. */
import type { ContentfulStatusCode } from "hono/utils/http-status";

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new ApiError(404, `${what} not found`);
export const badRequest = (message: string) => new ApiError(400, message);
