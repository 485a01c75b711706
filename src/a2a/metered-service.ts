// The service core as the bindings see it, with the request metrics around
// each call: one counter bump per request (method, binding, outcome: ok or the
// error's ErrorInfo reason), and for streams the open-stream gauge and the time
// to the first event after the task snapshot. The core itself stays unaware.
import type { Message } from "@bufbuild/protobuf";
import type { pb } from "../contract/index.js";
import type { ServerMetrics } from "../server/metrics.js";
import type { CallContext } from "./core/call-context.js";
import { A2AError } from "./core/errors.js";
import { A2A_METHODS, callStream, callUnary, overrideMethod, type A2AMethod } from "./core/methods.js";
import type { A2AService } from "./core/service.js";

type Stream = AsyncIterable<pb.StreamResponse>;

const outcomeOf = (error: unknown): string => (error instanceof A2AError ? error.spec.reason : "INTERNAL");

/** A view of `service` whose API methods are metered; everything else is the service's own. */
export function meteredService(service: A2AService, metrics: ServerMetrics): A2AService {
  const count = (method: string, ctx: CallContext, outcome: string): void =>
    metrics.requests.inc({ method, binding: ctx.binding, outcome });

  function unary(method: A2AMethod) {
    return async (req: Message, ctx: CallContext): Promise<unknown> => {
      try {
        const result = await callUnary(service, method, req, ctx);
        count(method.name, ctx, "ok");
        return result;
      } catch (error) {
        count(method.name, ctx, outcomeOf(error));
        throw error;
      }
    };
  }

  async function* follow(
    stream: Stream,
    ctx: CallContext,
    started: number,
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
    } finally {
      metrics.openStreams.dec({ binding });
    }
  }

  function streaming(method: A2AMethod) {
    return async (req: Message, ctx: CallContext): Promise<Stream> => {
      const started = performance.now();
      let stream: Stream;
      try {
        stream = await callStream(service, method, req, ctx);
      } catch (error) {
        count(method.name, ctx, outcomeOf(error));
        throw error;
      }
      count(method.name, ctx, "ok");
      return follow(stream, ctx, started);
    };
  }

  // Every method of the service table, so none goes unmetered.
  const metered = Object.create(service) as A2AService;
  for (const method of A2A_METHODS)
    overrideMethod(metered, method, method.streaming ? streaming(method) : unary(method));
  return metered;
}
