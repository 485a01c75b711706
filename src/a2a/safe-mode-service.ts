// The service core as the bindings see it in safe mode (IAC_CODE_A2A_SAFE_MODE):
// every answer, streamed event and error message path-projected on its way out
// (core/path-projection.ts), so JSON-RPC, REST, gRPC and the custom transports
// all send the projected form. The core and its stores keep the real paths.
import type { CallContext } from "./core/call-context.js";
import { A2AError } from "./core/errors.js";
import type { PathProjector } from "./core/path-projection.js";
import type { A2AService } from "./core/service.js";

/** The API methods the bindings call; the card is not projected (it names no server path). */
const UNARY = [
  "sendMessage",
  "getTask",
  "listTasks",
  "cancelTask",
  "createTaskPushNotificationConfig",
  "getTaskPushNotificationConfig",
  "listTaskPushNotificationConfigs",
  "deleteTaskPushNotificationConfig",
] as const;
const STREAMING = ["sendStreamingMessage", "subscribeToTask"] as const;

type Call = (request: unknown, ctx: CallContext) => Promise<unknown>;

export function projectedService(service: A2AService, projector: PathProjector): A2AService {
  const projectError = (error: unknown): unknown =>
    error instanceof A2AError
      ? new A2AError(error.errorName, projector.projectText(error.message), projector.project(error.metadata))
      : error;

  async function* projectEvents(stream: AsyncIterable<unknown>): AsyncGenerator<unknown> {
    try {
      for await (const event of stream) yield projector.project(event);
    } catch (error) {
      throw projectError(error);
    }
  }

  const projected = Object.create(service) as Record<string, Call>;
  const methods = service as unknown as Record<string, Call>;
  for (const name of UNARY) {
    projected[name] = (request, ctx) =>
      methods[name].call(service, request, ctx).then(
        (result) => projector.project(result),
        (error: unknown) => Promise.reject(projectError(error)),
      );
  }
  for (const name of STREAMING) {
    projected[name] = (request, ctx) =>
      methods[name].call(service, request, ctx).then(
        (stream) => projectEvents(stream as AsyncIterable<unknown>),
        (error: unknown) => Promise.reject(projectError(error)),
      );
  }
  return projected as unknown as A2AService;
}
