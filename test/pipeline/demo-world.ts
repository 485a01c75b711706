// Demo mode (nothing configured) for the scenario tests: a runtime over fresh
// directories (or the same ones again, for a restart), a session, and a driver
// that plays a pipeline turn answering each input as the test says.
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { createAgentRuntime } from "../../src/runtime/index.js";
import type {
  AgentRuntime,
  AgentSession,
  InputAnswer,
  InputRequest,
  PipelineEnvelope,
  RuntimeEvent,
  TurnOverrides,
} from "../../src/runtime/seam.js";
import { drive, silentLogger, tempDir, type AnswerBody } from "../runtime/helpers.js";
import { envelopes } from "./helpers.js";

export interface DemoWorld {
  dir: string;
  cwd: string;
  configDir: string;
  runtime: AgentRuntime;
  session: AgentSession;
  close(): Promise<void>;
}

/** A demo-mode runtime and one session; `dir` + `sessionId` restore both after a restart. */
export async function demoWorld(
  options: { dir?: string; sessionId?: string; contextId?: string } = {},
): Promise<DemoWorld> {
  const dir = options.dir ?? (await tempDir("iac-demo-scenario-"));
  const cwd = path.join(dir, "workspace");
  const configDir = path.join(dir, "config");
  await mkdir(cwd, { recursive: true });
  const runtime = await createAgentRuntime({
    configDir,
    env: { HOME: dir },
    homeDir: dir,
    logger: silentLogger(),
  });
  const session = await runtime.openSession({
    contextId: options.contextId ?? "demo-scenario",
    cwd,
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
  });
  return {
    dir,
    cwd,
    configDir,
    runtime,
    session,
    close: () => runtime.close(),
  };
}

/** How a test answers an input: a body (inputId filled in), or undefined to leave it waiting. */
export type Answerer = (request: InputRequest, seen: readonly RuntimeEvent[]) => AnswerBody | undefined;

/** Every permission allowed once, candidate 1 chosen, the first VPC selected, the deployment confirmed. */
export const happyAnswers: Answerer = (request) => {
  switch (request.kind) {
    case "permission":
      return { kind: "permission", decision: "allow_once" };
    case "candidate_selection":
      return {
        kind: "candidate_selection",
        selectedId: request.options.some((o) => o.id === "1") ? "1" : "0",
      };
    case "cloud_resource_selection": {
      const first = request.options[0];
      return first
        ? { kind: "cloud_resource_selection", value: first.id, label: first.label }
        : { kind: "cloud_resource_selection", cancelled: true, optionsEmpty: true };
    }
    case "deployment_confirmation":
      return { kind: "deployment_confirmation", action: "confirm" };
    case "pipeline_pause_confirmation":
      return { kind: "pipeline_pause_confirmation", selectedId: "continue" };
    default:
      return undefined;
  }
};

/** The happy answers, choosing these candidates in turn (the last one again after that). */
export function choosingAnswers(...ids: string[]): Answerer {
  let n = 0;
  return answering((request) =>
    request.kind === "candidate_selection"
      ? { kind: "candidate_selection", selectedId: ids[Math.min(n++, ids.length - 1)] }
      : undefined,
  );
}

/** Answers with `answers` first (undefined falls through to the happy answers). */
export function answering(answers: Answerer): Answerer {
  return (request, seen) => answers(request, seen) ?? happyAnswers(request, seen);
}

export interface PlayedTurn {
  events: RuntimeEvent[];
  list: PipelineEnvelope[];
  inputs: InputRequest[];
  /** The answers given, in order, with the request they answered. */
  answered: Array<{ request: InputRequest; answer: InputAnswer }>;
  /** Answers answerInput refused (the error thrown). */
  refused: Error[];
}

/**
 * Plays one pipeline turn (a new run, a message on one, or with `resume` a
 * restored run) answering as `answer` says. After every event the inputs that
 * still wait are offered to `answer` again, so a test can hold one until
 * something happened (undefined: not yet).
 */
export async function play(
  session: AgentSession,
  text: string,
  answer: Answerer = happyAnswers,
  options: { overrides?: TurnOverrides; onEvent?: (event: RuntimeEvent) => void; resume?: boolean } = {},
): Promise<PlayedTurn> {
  const seen: RuntimeEvent[] = [];
  const answered: PlayedTurn["answered"] = [];
  const refused: Error[] = [];
  const waiting: InputRequest[] = [];
  const offer = (): void => {
    const pending = new Set(session.pendingInputs().map((p) => p.inputId));
    for (const request of [...waiting]) {
      if (!pending.has(request.inputId)) continue;
      const body = answer(request, seen);
      if (!body) continue;
      waiting.splice(waiting.indexOf(request), 1);
      const full: InputAnswer = { ...body, inputId: request.inputId };
      answered.push({ request, answer: full });
      try {
        session.answerInput(full);
      } catch (error) {
        // Refused: the input still waits, and is offered again after the next event.
        refused.push(error as Error);
        waiting.push(request);
        setImmediate(offer);
      }
    }
  };
  const overrides = { runMode: "pipeline" as const, ...options.overrides };
  const iterable = options.resume
    ? session.resumeTurn(overrides, new AbortController().signal)
    : session.runTurn({ text, images: [], overrides }, new AbortController().signal);
  const events = await drive(iterable, session, {
    onEvent: (event) => {
      seen.push(event);
      if (event.type === "input_required") waiting.push(event.request);
      options.onEvent?.(event);
      setImmediate(offer);
    },
  });
  return {
    events,
    list: envelopes(events),
    inputs: events.flatMap((e) => (e.type === "input_required" ? [e.request] : [])),
    answered,
    refused,
  };
}
