// Opening a connection: agent card discovery (with signature verification
// when any verification option is set), the binding chosen from the card or
// the URL scheme, and the calls themselves with the interface's tenant and the
// timeout applied.
import {
  create,
  type DescMessage,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import { decodeProtoJson, pb, ProtoJsonError } from "../../contract/index.js";
import {
  CardVerificationError,
  fetchAgentCard,
  JwksError,
  type CardVerificationOptions,
} from "../signing/index.js";
import { agentCardUrl } from "../signing/fetch-card.js";
import { requestHeaders, type AuthSettings } from "./auth.js";
import { networkReason } from "./bindings/binding.js";
import {
  chooseEndpoint,
  directEndpoint,
  openBinding,
  type A2aBinding,
  type BindingName,
  type Endpoint,
} from "./bindings/index.js";
import { HttpJsonRpcChannel, type PerRequest } from "./bindings/http-jsonrpc.js";
import { JsonRpcBinding } from "./bindings/jsonrpc.js";
import { ClientError } from "./errors.js";

export interface ConnectSettings {
  url: string;
  binding?: BindingName;
  auth: AuthSettings;
  verification: CardVerificationOptions;
  /** Milliseconds; 0 waits forever. */
  timeoutMs: number;
}

/** AbortSignal.timeout needs a number; "forever" is the largest timer Node accepts. */
const FOREVER_MS = 2_147_483_647;

/** GET <url>/.well-known/agent-card.json with the auth headers, verified when asked. */
export async function discoverCard(
  url: string,
  auth: AuthSettings,
  verification: CardVerificationOptions,
  timeoutMs: number,
): Promise<Record<string, unknown>> {
  const cardUrl = agentCardUrl(url);
  try {
    const fetched = await fetchAgentCard(url, {
      headers: requestHeaders(auth),
      verification,
      timeoutMs: timeoutMs > 0 ? timeoutMs : FOREVER_MS,
    });
    return fetched.card;
  } catch (error) {
    if (error instanceof CardVerificationError) throw new ClientError(error.message);
    if (error instanceof JwksError)
      throw new ClientError(`A2A Agent Card verification failed: ${error.message}`);
    if (error instanceof Error && error.name === "TimeoutError") {
      throw new ClientError(`No reply from ${cardUrl} within ${timeoutMs / 1000} s (--timeout).`);
    }
    if (error instanceof TypeError) throw new ClientError(`Cannot reach ${cardUrl}: ${networkReason(error)}`);
    throw new ClientError(error instanceof Error ? error.message : String(error));
  }
}

export class A2aClient {
  constructor(
    readonly binding: A2aBinding,
    readonly endpoint: Endpoint,
    private readonly timeoutMs: number,
  ) {}

  unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    init: MessageInitShape<I>,
    signal?: AbortSignal,
  ): Promise<MessageShape<O>> {
    return this.binding.unary(method, this.request(method.input, init), {
      timeoutMs: this.timeoutMs,
      signal,
    });
  }

  stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    init: MessageInitShape<I>,
    signal?: AbortSignal,
  ): AsyncIterable<MessageShape<O>> {
    return this.binding.stream(method, this.request(method.input, init), {
      timeoutMs: this.timeoutMs,
      signal,
    });
  }

  close(): Promise<void> {
    return this.binding.close();
  }

  /** Every A2A request message has a tenant field; the interface's tenant fills it. */
  private request<I extends DescMessage>(schema: I, init: MessageInitShape<I>): MessageShape<I> {
    const message = create(schema, init);
    if (this.endpoint.tenant && "tenant" in message)
      (message as { tenant: string }).tenant = this.endpoint.tenant;
    return message;
  }
}

/**
 * A client of the JSON-RPC binding over HTTP whose endpoint and headers are
 * asked for at each request (a managed server that may move to another port,
 * a traceparent per call), without card discovery.
 */
export function jsonRpcClient(
  target: PerRequest<string>,
  headers: PerRequest<Record<string, string>>,
  timeoutMs: number,
): A2aClient {
  const channel = new HttpJsonRpcChannel(target, headers);
  const endpoint: Endpoint = {
    binding: "jsonrpc",
    get url() {
      return channel.url;
    },
    tenant: "",
  };
  return new A2aClient(new JsonRpcBinding(channel), endpoint, timeoutMs);
}

export async function connect(settings: ConnectSettings): Promise<A2aClient> {
  let endpoint = directEndpoint(settings.url, settings.binding);
  if (!endpoint) {
    const json = await discoverCard(settings.url, settings.auth, settings.verification, settings.timeoutMs);
    let card: pb.AgentCard;
    try {
      card = decodeProtoJson(pb.AgentCardSchema, json);
    } catch (error) {
      if (!(error instanceof ProtoJsonError)) throw error;
      throw new ClientError(
        `The agent card at ${agentCardUrl(settings.url)} is not an A2A card: ${error.message}`,
      );
    }
    const legacyUrl = typeof json.url === "string" ? json.url : undefined;
    endpoint = chooseEndpoint(card, legacyUrl, settings.url, settings.binding);
  }
  const binding = await openBinding(endpoint, requestHeaders(settings.auth));
  return new A2aClient(binding, endpoint, settings.timeoutMs);
}
