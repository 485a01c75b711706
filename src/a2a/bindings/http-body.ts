// Request bodies of the HTTP+JSON binding: bounded in size, JSON only
// (application/json or application/a2a+json), empty allowed where the route
// has nothing to send (cancel, subscribe).
import type { IncomingMessage } from "node:http";
import { readJsonBody as readSafeJson } from "../../server/json-body.js";
import { A2AError } from "../core/request/errors.js";

const JSON_TYPES = /^application\/(?:a2a\+)?json\s*(?:;|$)/i;

export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const read = await readSafeJson(req, { maxBytes: limit });
  // An empty body may come with any Content-Type (the SDK sends application/json on GETs).
  if (read.ok && read.value === undefined) return undefined;
  const type = req.headers["content-type"] ?? "";
  if (!JSON_TYPES.test(type)) {
    throw new A2AError(
      "ContentTypeNotSupportedError",
      "Content-Type must be application/json or application/a2a+json",
      { contentType: type.slice(0, 100) },
    );
  }
  if (read.ok) return read.value;
  if (read.failure === "invalid-json" || read.failure === "not-utf8")
    throw new A2AError("JSONParseError", "Invalid JSON payload");
  throw new A2AError("InvalidRequestError", read.message);
}
