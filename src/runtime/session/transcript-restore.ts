// A transcript opened from the store, for a session and for each pipeline
// step attempt alike: created when the store holds none, otherwise its
// messages and the round that still waits for answers; then the conversation,
// waiting round and permission gate built on it. A round that is not the last
// assistant message's, or asks nothing, is stale (the process stopped between
// two writes) and dropped: its inputs could never be answered.
import type { Logger } from "pino";
import type { Message } from "../messages.js";
import type { PermissionRule } from "../permissions/rules.js";
import { Conversation } from "./conversation.js";
import { PermissionGate } from "./permission-gate.js";
import type { SessionContext } from "./session-context.js";
import type { PendingRound, SessionData, SessionMeta } from "./store.js";
import { WaitingRound } from "./waiting-round.js";

export interface Transcript {
  /** The stored meta; undefined when the transcript was created now. */
  meta: SessionMeta | undefined;
  messages: Message[];
  round: PendingRound | undefined;
}

/**
 * Reads the transcript, or creates it with these ids; one kept for another
 * workspace is refused. `fresh`: the store holds nothing of it (nothing is read).
 */
export async function restoreTranscript(
  store: SessionData,
  logger: Logger,
  ids: Pick<SessionMeta, "sessionId" | "contextId" | "cwd">,
  fresh = false,
): Promise<Transcript> {
  const meta = fresh ? undefined : await store.readMeta();
  if (!meta) {
    await store.create({ version: 1, ...ids, createdAt: new Date().toISOString() });
    return { meta: undefined, messages: [], round: undefined };
  }
  if (meta.cwd !== ids.cwd) throw new Error("The session belongs to a different workspace.");
  const messages = await store.loadConversation();
  let round = await store.loadPending();
  const lastAssistant = [...messages].reverse().find((m) => m.role === "assistant");
  if (round && (round.assistantMessageId !== lastAssistant?.id || round.inputs.length === 0)) {
    logger.warn({ sessionId: ids.sessionId }, "stale pending round discarded");
    round = undefined;
    await store.savePending(undefined);
  }
  return { meta, messages, round };
}

/**
 * The session parts that live on a transcript: its conversation, waiting
 * round and permission gate. The gate keeps allow_always answers with the
 * session's rules: a step attempt's transcript shares its session's.
 */
export function transcriptContext(
  base: Omit<SessionContext, "conversation" | "rounds" | "permissions">,
  transcript: Transcript,
  sessionRules: { store: SessionData; rules: PermissionRule[] },
): SessionContext {
  const rounds = new WaitingRound(base.store, base.logger, base.lifetime, transcript.round);
  return {
    ...base,
    conversation: new Conversation(transcript.messages, base.store),
    rounds,
    permissions: new PermissionGate({ ...base, store: sessionRules.store, rounds }, sessionRules.rules),
  };
}
