// The HTTP+JSON (REST) binding. Routes come from the google.api.http rules of
// the generated A2AService descriptors: path fields from the request, the rest
// as the JSON body ("*") or as query parameters. Replies are ProtoJSON; streams
// are SSE whose records are bare StreamResponse objects; errors are
// google.rpc.Status bodies.
import {
  getOption,
  type DescMessage,
  type DescMethod,
  type DescMethodServerStreaming,
  type DescMethodUnary,
  type JsonObject,
  type JsonValue,
  type MessageShape,
} from "@bufbuild/protobuf";
import { http as httpRule } from "../../../../generated/proto/google/api/annotations_pb.js";
import { decodeProtoJson, encodeProtoJson, ProtoJsonError } from "../../../contract/index.js";
import { TransportError, type A2aBinding, type CallOptions } from "./binding.js";
import {
  bodyText,
  httpError,
  httpRequest,
  isEventStream,
  parseJson,
  sseBatches,
  type HttpExchange,
} from "./http.js";

interface Route {
  verb: "GET" | "POST" | "DELETE";
  path: string;
  body: boolean;
}

/** The HTTP rule of a method; the /{tenant} twin when the request names a tenant. */
function routeOf(method: DescMethod, tenant: string): Route {
  const primary = getOption(method, httpRule);
  const rule = tenant ? (primary.additionalBindings[0] ?? primary) : primary;
  const { case: verb, value } = rule.pattern;
  if (verb !== "get" && verb !== "post" && verb !== "delete") {
    throw new TransportError(`${method.name} has no HTTP+JSON route.`);
  }
  return { verb: verb.toUpperCase() as Route["verb"], path: value, body: rule.body === "*" };
}

export class RestBinding implements A2aBinding {
  readonly name = "rest";
  readonly url: string;

  constructor(
    url: string,
    private readonly headers: Record<string, string>,
  ) {
    this.url = url.replace(/\/+$/, "");
  }

  async unary<I extends DescMessage, O extends DescMessage>(
    method: DescMethodUnary<I, O>,
    input: MessageShape<I>,
    options: CallOptions,
  ): Promise<MessageShape<O>> {
    const { url, exchange } = await this.send(method, input, "application/json", options);
    const text = await bodyText(url, exchange, options);
    if (!exchange.response.ok) throw httpError(exchange.response.status, text);
    // DeleteTaskPushNotificationConfig answers 204 (or an empty body) for google.protobuf.Empty.
    return decode(method, text.trim() === "" ? {} : parseJson(text, `The ${method.name} reply`));
  }

  async *stream<I extends DescMessage, O extends DescMessage>(
    method: DescMethodServerStreaming<I, O>,
    input: MessageShape<I>,
    options: CallOptions,
  ): AsyncGenerator<MessageShape<O>> {
    const { url, exchange } = await this.send(method, input, "text/event-stream", options);
    if (!exchange.response.ok || !isEventStream(exchange.response)) {
      throw httpError(exchange.response.status, await bodyText(url, exchange, options));
    }
    for await (const batch of sseBatches(url, exchange, options)) {
      for (const record of batch) {
        if (record.event === "error") throw httpError(500, record.data);
        yield decode(method, parseJson(record.data, `An event from ${url}`));
      }
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private async send<I extends DescMessage>(
    method: DescMethodUnary<I> | DescMethodServerStreaming<I>,
    input: MessageShape<I>,
    accept: string,
    options: CallOptions,
  ): Promise<{ url: string; exchange: HttpExchange }> {
    const json = encodeProtoJson(method.input, input) as JsonObject;
    const route = routeOf(method, typeof json.tenant === "string" ? json.tenant : "");
    // Path fields ({id=*}, {task_id=*}, {tenant}) leave the body and the query.
    const path = route.path.replace(/\{([a-z_]+)(?:=[^}]*)?\}/g, (_match, name: string) => {
      const field = method.input.fields.find((f) => f.name === name);
      const value = field ? json[field.jsonName] : undefined;
      if (field) delete json[field.jsonName];
      return encodeURIComponent(typeof value === "string" || typeof value === "number" ? String(value) : "");
    });
    let url = `${this.url}${path}`;
    if (!route.body) {
      const query = queryString(json);
      if (query) url += `?${query}`;
    }
    const exchange = await httpRequest(
      url,
      {
        method: route.verb,
        headers: {
          ...this.headers,
          Accept: accept,
          ...(route.body ? { "Content-Type": "application/json" } : {}),
        },
        body: route.body ? JSON.stringify(json) : undefined,
      },
      options,
    );
    return { url, exchange };
  }
}

/** ProtoJSON fields as query parameters (scalars, enum names, timestamps; lists repeat the key). */
function queryString(json: JsonObject): string {
  const params = new URLSearchParams();
  const add = (key: string, value: JsonValue) => {
    if (value === null || typeof value === "object") return;
    params.append(key, String(value));
  };
  for (const [key, value] of Object.entries(json)) {
    if (Array.isArray(value)) value.forEach((item) => add(key, item));
    else add(key, value);
  }
  return params.toString();
}

function decode<O extends DescMessage>(method: { name: string; output: O }, json: unknown): MessageShape<O> {
  try {
    return decodeProtoJson(method.output, json);
  } catch (error) {
    if (error instanceof ProtoJsonError) {
      throw new TransportError(
        `The ${method.name} reply is not a valid ${method.output.name}: ${error.message}`,
      );
    }
    throw error;
  }
}
