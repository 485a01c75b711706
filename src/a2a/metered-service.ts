// The service core as the bindings see it, with the request metrics around
// each call: one counter bump per request (method, binding, outcome: ok or the
// error's ErrorInfo reason), and for streams the open-stream gauge and the time
// to the first event after the task snapshot. The core itself stays unaware.
import type { pb } from "../contract/index.js";
import type { ServerMetrics } from "../server/metrics.js";
import type { CallContext } from "./core/call-context.js";
import { A2AError } from "./core/errors.js";
import type { A2AService } from "./core/service.js";

type Stream = AsyncIterable<pb.StreamResponse>;

const outcomeOf = (error: unknown): string => (error instanceof A2AError ? error.spec.reason : "INTERNAL");

/** A view of `service` whose API methods are metered; everything else is the service's own. */
export function meteredService(service: A2AService, metrics: ServerMetrics): A2AService {
  const count = (method: string, ctx: CallContext, outcome: string): void =>
    metrics.requests.inc({ method, binding: ctx.binding, outcome });

  function unary<Req, Res>(method: string, call: (req: Req, ctx: CallContext) => Promise<Res>) {
    return async (req: Req, ctx: CallContext): Promise<Res> => {
      try {
        const result = await call(req, ctx);
        count(method, ctx, "ok");
        return result;
      } catch (error) {
        count(method, ctx, outcomeOf(error));
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

  function streaming<Req>(method: string, call: (req: Req, ctx: CallContext) => Promise<Stream>) {
    return async (req: Req, ctx: CallContext): Promise<Stream> => {
      const started = performance.now();
      let stream: Stream;
      try {
        stream = await call(req, ctx);
      } catch (error) {
        count(method, ctx, outcomeOf(error));
        throw error;
      }
      count(method, ctx, "ok");
      return follow(stream, ctx, started);
    };
  }

  // The bindings call only these methods (and pushConfigUnavailable, which just throws).
  const metered = Object.create(service) as A2AService;
  metered.sendMessage = unary("SendMessage", (r, c) => service.sendMessage(r, c));
  metered.getTask = unary("GetTask", (r, c) => service.getTask(r, c));
  metered.listTasks = unary("ListTasks", (r, c) => service.listTasks(r, c));
  metered.cancelTask = unary("CancelTask", (r, c) => service.cancelTask(r, c));
  metered.getExtendedAgentCard = unary("GetExtendedAgentCard", (r, c) => service.getExtendedAgentCard(r, c));
  metered.sendStreamingMessage = streaming("SendStreamingMessage", (r, c) =>
    service.sendStreamingMessage(r, c),
  );
  metered.subscribeToTask = streaming("SubscribeToTask", (r, c) => service.subscribeToTask(r, c));
  return metered;
}
