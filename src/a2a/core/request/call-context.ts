// What a binding tells the core about the caller of one request.
import type { Language } from "../../../i18n/index.js";

export interface CallContext {
  /** Auth principal: "" (anonymous), "bearer", "basic:<user>", "api-key:<header>". */
  owner: string;
  /** True when the caller proved an identity (any configured scheme matched). */
  authenticated: boolean;
  /** Extension URIs the caller listed in A2A-Extensions. */
  requestedExtensions: string[];
  /** Accept-Language fallback for server-generated text. */
  acceptLanguage?: string;
  /** Aborts when the client goes away (streams stop; running turns go on). */
  signal: AbortSignal;
  /** The binding or custom transport the call came in on (metrics label). */
  binding: CallBinding;
}

/** The three A2A bindings, then the custom JSON-RPC transports by name (src/a2a/transports/). */
export type CallBinding =
  "jsonrpc" | "rest" | "grpc" | "stdio" | "unix" | "websocket" | "grpc-jsonrpc" | "redis-streams";

export interface ResolvedLanguage {
  language: Language;
}

/**
 * The abort reason when a client's connection closes. One shared value: an
 * abort() without a reason builds a DOMException (with its stack) per request.
 */
export const CONNECTION_CLOSED = Object.freeze(new Error("the client connection closed"));
