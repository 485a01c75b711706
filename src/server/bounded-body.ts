// Request bodies read with a size limit that is enforced while the body
// streams in (a too-large body is never buffered whole), shared by the A2A
// bindings and the AG-UI adapter.
import type { IncomingMessage } from "node:http";

export const TOO_LARGE = Symbol("too-large");

/**
 * The body, or TOO_LARGE as soon as it passes `limit` bytes (a declared
 * Content-Length over the limit fails before anything is read). The request is
 * left readable, so the caller can still answer and then drain or close it.
 */
export function readBoundedBody(req: IncomingMessage, limit: number): Promise<Buffer | typeof TOO_LARGE> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) {
        done = true;
        chunks.length = 0;
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!done) resolve(Buffer.concat(chunks));
    });
    req.on("error", (error) => {
      if (!done) reject(error);
    });
  });
}
