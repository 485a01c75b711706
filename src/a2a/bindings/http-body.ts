// Request bodies of the HTTP+JSON binding: bounded in size, JSON only
// (application/json or application/a2a+json), empty allowed where the route
// has nothing to send (cancel, subscribe).
import type { IncomingMessage } from "node:http";
import { readBoundedBody, TOO_LARGE } from "../../server/bounded-body.js";
import { A2AError } from "../core/errors.js";

const JSON_TYPES = /^application\/(?:a2a\+)?json\s*(?:;|$)/i;

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const body = await readBoundedBody(req, limit);
  if (body === TOO_LARGE) throw new A2AError("InvalidRequestError", `Payload larger than ${limit} bytes`);
  const text = body.toString("utf8");
  if (text.trim() === "") return undefined;
  // An empty body may come with any Content-Type (the SDK sends application/json on GETs).
  const type = req.headers["content-type"] ?? "";
  if (!JSON_TYPES.test(type)) {
    throw new A2AError(
      "ContentTypeNotSupportedError",
      "Content-Type must be application/json or application/a2a+json",
      { contentType: type.slice(0, 100) },
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new A2AError("JSONParseError", "Invalid JSON payload");
  }
}
