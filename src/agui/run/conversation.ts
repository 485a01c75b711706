// What a reconnecting UI is given when a run or an observer starts on a thread
// that already has a history: the thread's conversation (MESSAGES_SNAPSHOT),
// read from the A2A task history of the thread's context with ListTasks (the
// adapter stores no message text, agui-iaccode.md §7.2), and the pipeline's
// state (ACTIVITY_SNAPSHOT of §4.6) from the A2A pipeline state route.
import { isObject, normalizeState, str, type JsonObject } from "../upstream/a2a-items.js";
import type { A2aClient, RequestSignals } from "../upstream/a2a-client.js";
import type { AguiEvent, SnapshotMessage } from "../events.js";
import { lastUserMessage } from "./inputs.js";
import { pipelineMessageKey } from "./pipeline-steps.js";
import type { RunState } from "./run-state.js";

/** ListTasks pages read at most (100 tasks each): a thread's conversation is rarely longer. */
const MAX_PAGES = 10;

/** The text of a message's text parts, joined (data, file and image parts are not conversation text). */
function textOf(message: JsonObject): string {
  const parts = Array.isArray(message.parts) ? message.parts : [];
  return parts.map((p) => (isObject(p) && typeof p.text === "string" ? p.text : "")).join("");
}

function roleOf(message: JsonObject): "user" | "assistant" {
  const role = typeof message.role === "string" ? message.role.toLowerCase() : "";
  return role === "role_user" || role === "user" ? "user" : "assistant";
}

/** The tasks of a context, oldest first (ListTasks answers newest first). */
async function tasksOf(client: A2aClient, contextId: string, signals: RequestSignals): Promise<JsonObject[]> {
  const tasks: JsonObject[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const params: JsonObject = { contextId, pageSize: 100 };
    if (pageToken) params.pageToken = pageToken;
    const result = await client.call("ListTasks", params, signals, { safe: true });
    const list = isObject(result) && Array.isArray(result.tasks) ? result.tasks : [];
    for (const task of list) if (isObject(task)) tasks.push(task);
    pageToken = isObject(result) ? str(result.nextPageToken) : undefined;
    if (!pageToken) break;
  }
  return tasks.reverse();
}

/** What a reconnecting client is given: the conversation, and the pipeline's state if one ran. */
export interface ThreadSnapshots {
  messages: SnapshotMessage[];
  /** The latest pipeline run's snapshot, and the journal events after its cursor (read meanwhile). */
  pipeline?: { snapshot: JsonObject; later: JsonObject[] };
}

/**
 * The latest pipeline run's texts, one assistant message per step (the
 * message key the live stream groups them under), in the order they began.
 */
function pipelineTexts(events: JsonObject[], fallbackRunId: string): SnapshotMessage[] {
  const texts = new Map<string, string>();
  for (const env of events) {
    const data = isObject(env.data) ? env.data : undefined;
    if (env.eventType !== "text_delta" || typeof data?.text !== "string") continue;
    const key = pipelineMessageKey(env, fallbackRunId);
    texts.set(key, (texts.get(key) ?? "") + data.text);
  }
  return [...texts].filter(([, text]) => text).map(([id, content]) => ({ id, role: "assistant", content }));
}

/**
 * The thread's conversation and pipeline state. The conversation is each task's
 * history (user messages and the agent's answers) as text messages, oldest
 * first, each message id once, a finished turn's final status message when its
 * history lacks it; after the messages of the task the latest pipeline runs in,
 * that run's step texts from its journal, up to the snapshot's cursor (what
 * comes after is the stream's). `taskId`: a task of the context (the pipeline
 * state route finds the context by it); none, no pipeline state is read.
 */
export async function threadSnapshots(
  client: A2aClient,
  thread: { threadId: string; contextId: string },
  taskId: string | null,
  signals: RequestSignals,
): Promise<ThreadSnapshots> {
  const tasks = await tasksOf(client, thread.contextId, signals);
  const state = taskId ? await client.pipelineState(taskId, 0, signals) : undefined;
  const messages: SnapshotMessage[] = [];
  const seen = new Set<string>();
  const push = (message: SnapshotMessage): void => {
    if (seen.has(message.id)) return;
    seen.add(message.id);
    messages.push(message);
  };
  const add = (message: unknown): void => {
    if (!isObject(message)) return;
    const id = str(message.messageId);
    const content = textOf(message);
    if (id && content) push({ id, role: roleOf(message), content });
  };
  let pipeline: ThreadSnapshots["pipeline"];
  let texts: SnapshotMessage[] = [];
  if (state) {
    const cursor = typeof state.snapshot.lastSequence === "number" ? state.snapshot.lastSequence : 0;
    const events = state.events.filter(isObject);
    const seq = (e: JsonObject) => (typeof e.sequence === "number" ? e.sequence : 0);
    texts = pipelineTexts(
      events.filter((e) => seq(e) <= cursor),
      `pipeline-${thread.threadId}`,
    );
    pipeline = { snapshot: state.snapshot, later: events.filter((e) => seq(e) > cursor) };
  }
  const pipelineTask = state ? str(state.snapshot.taskId) : undefined;
  for (const task of tasks) {
    for (const message of Array.isArray(task.history) ? task.history : []) add(message);
    if (pipelineTask && task.id === pipelineTask) {
      for (const m of texts) push(m);
      texts = [];
    }
    const status = isObject(task.status) ? task.status : undefined;
    const st = normalizeState(status?.state);
    if (st === "completed" || st === "input-required") add(status?.message);
  }
  for (const m of texts) push(m);
  return { messages, pipeline };
}

/**
 * The steps open in a pipeline snapshot, as the translator keys them: a
 * running or waiting top-level step (`step:<id>`), a running step of a running
 * candidate (`candidate:<candidate id>:<step id>`).
 */
export function openStepKeys(snapshot: JsonObject): string[] {
  const keys: string[] = [];
  for (const step of Array.isArray(snapshot.steps) ? snapshot.steps : []) {
    if (!isObject(step) || !str(step.id)) continue;
    if (step.status === "running" || step.status === "waiting_input") keys.push(`step:${String(step.id)}`);
  }
  for (const candidate of Array.isArray(snapshot.candidates) ? snapshot.candidates : []) {
    if (!isObject(candidate) || !str(candidate.id) || candidate.status !== "running") continue;
    for (const step of Array.isArray(candidate.steps) ? candidate.steps : []) {
      if (isObject(step) && str(step.id) && step.status === "running")
        keys.push(`candidate:${String(candidate.id)}:${String(step.id)}`);
    }
  }
  return keys.sort();
}

/**
 * What a new run on a thread that already had a task starts with, right after
 * RUN_STARTED: MESSAGES_SNAPSHOT (the conversation, then this run's own user
 * message) and, when a pipeline ran on the thread, the ACTIVITY_SNAPSHOT of its
 * state. The snapshots are a courtesy to reconnecting clients: a failure to
 * read them is logged and the run goes on without them.
 */
export async function newRunSnapshots(run: RunState): Promise<AguiEvent[]> {
  const { doc, request } = run.admission;
  const lastTaskId = doc.execution.lastTaskId;
  if (!lastTaskId) return [];
  const signals = run.signals();
  try {
    const { messages, pipeline } = await threadSnapshots(run.core.client, doc, lastTaskId, signals);
    const user = lastUserMessage(request.messages);
    const id = user && typeof user.id === "string" ? user.id : undefined;
    if (user && id && !messages.some((m) => m.id === id))
      messages.push({ id, role: "user", content: user.content as SnapshotMessage["content"] });
    const out = [run.tr.messagesSnapshot(messages)];
    if (pipeline) out.push(run.tr.activitySnapshot(pipeline.snapshot));
    return out;
  } catch (err) {
    if (!signals.signal?.aborted)
      run.core.logger?.warn(
        { threadId: doc.threadId, err: (err as Error).message },
        "thread snapshots unavailable",
      );
    return [];
  }
}
