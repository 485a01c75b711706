// `call` and `answer`: build the message, open the connection, run the turn.
import { randomUUID } from "node:crypto";
import { realpathSync } from "node:fs";
import path from "node:path";
import type { JsonObject } from "@bufbuild/protobuf";
import { pb } from "../../contract/index.js";
import { connect, type A2aClient } from "../../a2a/client/client.js";
import { ClientError, type ExitCode } from "../../a2a/client/errors.js";
import { choiceFromFlags, inputRequestOf, answerRequest } from "./inputs.js";
import type { OutputFormat } from "./output.js";
import type { Action, ActionContext, ClientIo } from "./action.js";
import { promptForInput } from "./prompt.js";
import { JsonRenderer, LiveRenderer, PlainRenderer, type TurnRenderer } from "./render.js";
import { parseRouteSpec, resolveRoute } from "./routes.js";
import { missingValue, type Settings } from "./settings.js";
import { runTurn, type SendParams, type TurnOptions } from "./turn.js";

export function openClient(settings: Settings, io: ClientIo, url: string): Promise<A2aClient> {
  return connect({
    url,
    binding: settings.binding(),
    auth: settings.auth(),
    verification: settings.verification(io.cwd()),
    timeoutMs: settings.timeoutMs(),
  });
}

/** --url, else the route chosen by --route-name or by the prompt among --route (or the file's routes). */
function callUrl(context: ActionContext, prompt: string): string {
  const url = context.settings.string("url");
  if (url) return url;
  const specs = context.opts.route as string[] | undefined;
  const routes = specs ? specs.map(parseRouteSpec) : context.configRoutes;
  const name = context.settings.string("route_name");
  if (routes.length === 0 && !name) {
    throw missingValue("url", "--url", ", or configure --route/--route-name");
  }
  return resolveRoute(routes, { name, prompt }).url;
}

/**
 * --cwd resolved against the current directory; `.` is the logical $PWD when it is the same
 * directory as the real cwd (keeps symlinked paths). Without --cwd nothing is sent: the server
 * uses its default workspace (ours: <config-dir>/workspace, or the context's earlier one).
 */
function workspace(settings: Settings, io: ClientIo): string | undefined {
  const given = settings.string("cwd");
  if (given === undefined) return undefined;
  const physical = io.cwd();
  if (given !== ".") return path.resolve(physical, given);
  const logical = io.env.PWD;
  try {
    if (logical && realpathSync(logical) === realpathSync(physical)) return logical;
  } catch {
    // An unreadable $PWD falls back to the real cwd.
  }
  return physical;
}

/** metadata.iac_code of a call: cwd, per-turn model and key, thinking. */
function iacMetadata(settings: Settings, io: ClientIo): JsonObject {
  const iac: JsonObject = {};
  const cwd = workspace(settings, io);
  if (cwd !== undefined) iac.cwd = cwd;
  const model = settings.string("iac_code_model")?.trim();
  const apiKey = settings.string("iac_code_api_key")?.trim();
  if (model) iac.iac_code_model = model;
  if (apiKey) iac.iac_code_api_key = apiKey;
  const thinking: JsonObject = {};
  const enabled = settings.flag("thinking_enabled");
  const effort = settings.string("thinking_effort")?.trim();
  const budget = settings.number("thinking_budget", Number.MIN_SAFE_INTEGER);
  if (enabled !== undefined) thinking.enabled = enabled;
  if (effort) thinking.effort = effort;
  if (budget !== undefined && budget > 0) thinking.budget = budget;
  if (Object.keys(thinking).length > 0) iac.thinking = thinking;
  return iac;
}

function turnOptions(context: ActionContext, format: OutputFormat, url: string): TurnOptions {
  const { io } = context;
  const terminal = Boolean(io.stdout.isTTY) && format === "text";
  const renderer: TurnRenderer =
    format === "json"
      ? new JsonRenderer(io.stdout)
      : terminal
        ? new LiveRenderer(io.stdout, io.stderr.isTTY ? io.stderr : { write: () => true })
        : new PlainRenderer(io.stdout);
  const interactive = terminal && Boolean(io.stdin.isTTY);
  return {
    stream: context.settings.flag("stream") ?? false,
    renderer,
    ask: interactive
      ? (request) => promptForInput(request, { stdin: io.stdin, stderr: io.stderr })
      : undefined,
    stderr: io.stderr,
    url,
  };
}

async function withClient(
  context: ActionContext,
  url: string,
  run: (client: A2aClient) => Promise<ExitCode>,
): Promise<ExitCode> {
  const client = await openClient(context.settings, context.io, url);
  try {
    return await run(client);
  } finally {
    await client.close();
  }
}

export const callAction: Action = (context) => {
  const format = context.settings.output(["text", "json"]);
  context.jsonErrors(format === "json");
  const prompt = context.opts.prompt as string;
  const url = callUrl(context, prompt);
  const contextId = context.settings.string("context_id");
  const params: SendParams = {
    message: {
      messageId: randomUUID(),
      role: pb.Role.USER,
      parts: [{ content: { case: "text", value: prompt } }],
      metadata: { iac_code: iacMetadata(context.settings, context.io) },
      ...(contextId ? { contextId } : {}),
    },
    configuration: { acceptedOutputModes: ["text/plain"] },
  };
  return withClient(context, url, (client) => runTurn(client, params, turnOptions(context, format, url)));
};

export const answerAction: Action = (context) => {
  const { settings, opts } = context;
  const format = settings.output(["text", "json"]);
  context.jsonErrors(format === "json");
  const url = settings.required("url");
  const taskId = settings.required("task_id");
  const inputId = opts.inputId as string;
  return withClient(context, url, async (client) => {
    const task = await client.unary(pb.A2AService.method.getTask, { id: taskId });
    const request = inputRequestOf(task.status?.state, task.metadata);
    if (!request) throw new ClientError(`Task ${taskId} is not waiting for input.`);
    if (request.inputId !== inputId) {
      throw new ClientError(`Task ${taskId} waits for input ${request.inputId}, not ${inputId}.`);
    }
    const choice = choiceFromFlags(request, {
      decision: opts.decision as string | undefined,
      answer: opts.answer as string | undefined,
    });
    return runTurn(client, answerRequest(request, choice), {
      ...turnOptions(context, format, url),
      answered: [request.inputId],
    });
  });
};
