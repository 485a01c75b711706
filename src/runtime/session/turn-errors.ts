// How a turn fails. A client gets one generic, localised error event (the
// kind says whether retrying may help, the error id ties it to the log);
// the detail goes to the server log with secrets redacted. A cancelled turn
// and a closed session are not failures: the turn just ends.
import type { Logger } from "pino";
import { t, type Language } from "../../i18n/index.js";
import { ERROR_CODE_MESSAGES, errorMessage, isAbortError, ProviderError, redactSecrets } from "../errors.js";
import { newErrorId } from "../ids.js";
import type { RuntimeEvent } from "../seam.js";
import type { Turn } from "./turn.js";

/** The session was closed while a turn waited: the turn stops, its pending round stays on disk. */
export class SessionClosedError extends Error {
  override name = "SessionClosedError";
}

export function turnErrorEvent(
  logger: Logger,
  lang: Language,
  error: unknown,
  secrets: readonly string[],
): RuntimeEvent {
  const errorId = newErrorId();
  const provider = error instanceof ProviderError ? error : undefined;
  const kind = provider?.kind ?? "fatal";
  const code = provider?.code ?? "RUNTIME_ERROR";
  const detail = redactSecrets(provider ? provider.detail : errorMessage(error), secrets);
  logger.error(
    {
      errorId,
      kind,
      code,
      detail,
      ...(provider?.endpoint ? { endpoint: provider.endpoint } : {}),
      ...(provider?.status ? { status: provider.status } : {}),
    },
    "turn failed",
  );
  return { type: "error", kind, code, message: t(lang, ERROR_CODE_MESSAGES[code], { errorId }), errorId };
}

/** Turns an unexpected exception anywhere in the turn into one sanitised error event. */
export async function* guardTurn(
  logger: Logger,
  turn: Turn,
  inner: AsyncGenerator<RuntimeEvent>,
): AsyncGenerator<RuntimeEvent> {
  try {
    yield* inner;
  } catch (error) {
    if (error instanceof SessionClosedError) return;
    if (turn.signal.aborted && isAbortError(error)) return;
    yield turnErrorEvent(logger, turn.lang, error, turn.secrets);
  }
}
