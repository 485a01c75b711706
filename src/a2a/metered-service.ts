// The service core as the bindings see it, with the request metrics around
// each call: one counter bump per request (method, binding, outcome: ok or the
// error's ErrorInfo reason), and for streams the open-stream gauge and the time
// to the first event after the task snapshot. The core itself stays unaware.
import type { Message } from "@bufbuild/protobuf";
import { pb } from "../contract/index.js";
import type { ServerMetrics } from "../server/metrics.js";
import type { CallContext } from "./core/request/call-context.js";
import { A2AError } from "./core/request/errors.js";
import { failSpan, SpanKind, startSpan, withSpan, type Span } from "../server/tracing/index.js";
import { A2A_METHODS, callStream, callUnary, overrideMethod, type A2AMethod } from "./core/methods.js";
import type { A2AService } from "./core/service.js";

type Stream = AsyncIterable<pb.StreamResponse>;

/** A failed call's outcome (metrics label, span status): the A2A reason, never the message. */
const outcomeOf = (error: unknown): string => (error instanceof A2AError ? error.spec.reason : "INTERNAL");

const pbService = pb.A2AService.typeName;

/** The span of one A2A call (undefined while tracing is off). */
function methodSpan(method: A2AMethod, ctx: CallContext): Span | undefined {
  return startSpan("iac-code.a2a", `A2A ${method.name}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      "rpc.system": "a2a",
      "rpc.service": pbService,
      "rpc.method": method.name,
      "iac_code.a2a.binding": ctx.binding,
    },
  });
}

/** A view of `service` whose API methods are metered; everything else is the service's own. */
export function meteredService(service: A2AService, metrics: ServerMetrics): A2AService {
  const count = (method: string, ctx: CallContext, outcome: string): void =>
    metrics.requests.inc({ method, binding: ctx.binding, outcome });

  function unary(method: A2AMethod) {
    return async (req: Message, ctx: CallContext): Promise<unknown> => {
      const span = methodSpan(method, ctx);
      try {
        const result = await withSpan(span, () => callUnary(service, method, req, ctx));
        count(method.name, ctx, "ok");
        return result;
      } catch (error) {
        count(method.name, ctx, outcomeOf(error));
        failSpan(span, error, outcomeOf(error));
        throw error;
      } finally {
        span?.end();
      }
    };
  }

  async function* follow(
    stream: Stream,
    ctx: CallContext,
    started: number,
    span: Span | undefined,
  ): AsyncGenerator<pb.StreamResponse> {
    const { binding } = ctx;
    metrics.openStreams.inc({ binding });
    let events = 0;
    try {
      for await (const event of stream) {
        // The first event is the task snapshot; the one after it is the turn's first news.
        if (++events === 2)
          metrics.firstEventSeconds.observe({ binding }, (performance.now() - started) / 1000);
        yield event;
      }
    } catch (error) {
      failSpan(span, error, outcomeOf(error));
      throw error;
    } finally {
      metrics.openStreams.dec({ binding });
      span?.setAttribute("iac_code.a2a.stream_events", events);
      span?.end();
    }
  }

  function streaming(method: A2AMethod) {
    return async (req: Message, ctx: CallContext): Promise<Stream> => {
      const started = performance.now();
      // The span lasts as long as the stream; the turn it starts is its child.
      const span = methodSpan(method, ctx);
      let stream: Stream;
      try {
        stream = await withSpan(span, () => callStream(service, method, req, ctx));
      } catch (error) {
        count(method.name, ctx, outcomeOf(error));
        failSpan(span, error, outcomeOf(error));
        span?.end();
        throw error;
      }
      count(method.name, ctx, "ok");
      return follow(stream, ctx, started, span);
    };
  }

  // Every method of the service table, so none goes unmetered.
  const metered = Object.create(service) as A2AService;
  for (const method of A2A_METHODS)
    overrideMethod(metered, method, method.streaming ? streaming(method) : unary(method));
  return metered;
}
