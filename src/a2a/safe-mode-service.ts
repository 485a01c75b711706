// The service core as the bindings see it in safe mode (IAC_CODE_A2A_SAFE_MODE):
// every answer, streamed event and error message path-projected on its way out
// (core/path-projection.ts), so JSON-RPC, REST, gRPC and the custom transports
// all send the projected form (push payloads too). The core and its stores
// keep the real paths.
import os from "node:os";
import type { Message } from "@bufbuild/protobuf";
import { PACKAGE_ROOT } from "../package-root.js";
import type { A2aServerSettings } from "./config/server-settings.js";
import { configDir } from "../server/paths.js";
import { existingRoots } from "../server/workspace-roots.js";
import type { CallContext } from "./core/request/call-context.js";
import { A2AError } from "./core/request/errors.js";
import { A2A_METHODS, callStream, callUnary, overrideMethod } from "./core/methods.js";
import { PathProjector } from "./core/path-projection.js";
import type { A2AService } from "./core/service.js";

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

  const projected = Object.create(service) as A2AService;
  for (const method of A2A_METHODS) {
    // The card names no server path (and is served unprojected on HTTP too).
    if (method.name === "GetExtendedAgentCard") continue;
    overrideMethod(projected, method, async (request: Message, ctx: CallContext) => {
      try {
        return method.streaming
          ? projectEvents(await callStream(service, method, request, ctx))
          : projector.project(await callUnary(service, method, request, ctx));
      } catch (error) {
        throw projectError(error);
      }
    });
  }
  return projected;
}

/**
 * Safe mode's known roots: the server's cwd, the temp dir, the config, persistence and
 * artifact dirs and the install dir; each context's workspace and the allowed roots join.
 */
export function safeModeProjector(
  settings: A2aServerSettings,
  cwd: string,
  env: NodeJS.ProcessEnv,
): PathProjector {
  const roots = [
    cwd,
    os.tmpdir(),
    configDir(env),
    settings.persistenceDir,
    settings.artifactDir,
    PACKAGE_ROOT,
  ];
  // Both spellings: a symlinked temp dir (macOS /var → /private/var) appears either way.
  return new PathProjector([...roots, ...existingRoots(roots)]);
}

/** A JSON payload with its paths projected (a payload that is not JSON is projected as text). */
export function projectJsonText(projector: PathProjector, payload: string): string {
  try {
    return JSON.stringify(projector.project(JSON.parse(payload) as unknown));
  } catch {
    return projector.projectText(payload);
  }
}
