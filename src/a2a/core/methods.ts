// The A2A methods, read from the generated descriptor of lf.a2a.v1.A2AService
// (as connect-es reads a service): name, streaming kind, request and response
// schemas. Every binding (JSON-RPC and the custom transports behind it, REST,
// gRPC) and the metering dispatch through this one table, so a method the
// proto adds cannot be served by one binding and missed by another.
import type { DescMessage, Message } from "@bufbuild/protobuf";
import { pb } from "../../contract/index.js";
import type { CallContext } from "./request/call-context.js";
import type { A2AService } from "./service.js";

/** The core's method names: the descriptor's local names (sendMessage, ...). */
export type A2AMethodLocalName = keyof typeof pb.A2AService.method;
/** The wire names (SendMessage, ...): JSON-RPC methods, gRPC paths, the metrics' `method` label. */
export type A2AMethodName = Capitalize<A2AMethodLocalName>;

export interface A2AMethod {
  name: A2AMethodName;
  localName: A2AMethodLocalName;
  /** Server streaming (SendStreamingMessage, SubscribeToTask); unary otherwise. */
  streaming: boolean;
  input: DescMessage;
  output: DescMessage;
}

type Stream = AsyncIterable<pb.StreamResponse>;
/** A core method as the table calls it (the descriptor typed each one's request). */
type CoreCall = (request: Message, ctx: CallContext) => Promise<unknown>;

export const A2A_METHODS: readonly A2AMethod[] = Object.freeze(
  pb.A2AService.methods.map((method) => {
    if (method.methodKind !== "unary" && method.methodKind !== "server_streaming")
      throw new Error(`A2AService.${method.name}: ${method.methodKind} methods are not served`);
    return Object.freeze({
      name: method.name as A2AMethodName,
      localName: method.localName as A2AMethodLocalName,
      streaming: method.methodKind === "server_streaming",
      input: method.input,
      output: method.output,
    });
  }),
);

const BY_NAME = new Map<string, A2AMethod>(A2A_METHODS.map((m) => [m.name, m]));

/** The method of a wire name, or undefined (also for inherited names such as "constructor"). */
export function a2aMethod(name: string): A2AMethod | undefined {
  return BY_NAME.get(name);
}

/** The method of a name the code spells (a typo throws at start-up, not per request). */
export function a2aMethodNamed(name: A2AMethodName): A2AMethod {
  const method = BY_NAME.get(name);
  if (!method) throw new Error(`A2AService has no method ${name}`);
  return method;
}

function coreCall(service: A2AService, method: A2AMethod): CoreCall {
  // Each core method takes the request message its descriptor names.
  return (service[method.localName] as unknown as CoreCall).bind(service);
}

/**
 * Calls a unary method of the core. A method whose response is
 * google.protobuf.Empty resolves with `{}` (the core returns nothing).
 */
export async function callUnary(
  service: A2AService,
  method: A2AMethod,
  request: Message,
  ctx: CallContext,
): Promise<Message | Record<string, never>> {
  if (method.streaming) throw new Error(`${method.name} is a streaming method`);
  const result = (await coreCall(service, method)(request, ctx)) as Message | undefined;
  return result ?? {};
}

/** Opens a streaming method of the core. */
export function callStream(
  service: A2AService,
  method: A2AMethod,
  request: Message,
  ctx: CallContext,
): Promise<Stream> {
  if (!method.streaming) throw new Error(`${method.name} is a unary method`);
  return coreCall(service, method)(request, ctx) as Promise<Stream>;
}

/** Replaces one method of `view` (an object whose prototype is the core) with `call`. */
export function overrideMethod(view: A2AService, method: A2AMethod, call: CoreCall): void {
  Object.defineProperty(view, method.localName, { value: call, writable: true, configurable: true });
}
