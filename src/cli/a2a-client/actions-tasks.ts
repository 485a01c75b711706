// discover, task-*, push-config-* and extended-card: one A2A call each, the
// reply printed as JSON (indented, or one line with --output json), task-list
// as a table.
import type { DescMessage, JsonObject, MessageShape } from "@bufbuild/protobuf";
import { encodeProtoJson, pb } from "../../contract/index.js";
import { openClient } from "./actions-call.js";
import type { A2aClient } from "../../a2a/client/client.js";
import { discoverCard } from "../../a2a/client/client.js";
import { carriesCredentials, directEndpoint, schemeOf } from "../../a2a/client/bindings/index.js";
import { EXIT, UsageError, type ExitCode } from "../../a2a/client/errors.js";
import { printJson, shellWord, sortedJson, taskTable, type OutputFormat } from "./output.js";
import type { Action, ActionContext } from "./action.js";

type Exchange<T> = (client: A2aClient) => Promise<T>;

/**
 * Reads and checks every setting first (so a missing value is reported before
 * any network call), then opens the connection for --url and runs the exchange.
 */
function oneCall(
  allowed: OutputFormat[],
  prepare: (context: ActionContext, format: OutputFormat) => Exchange<ExitCode>,
): Action {
  return async (context) => {
    const format = context.settings.output(allowed);
    context.jsonErrors(format === "json");
    const url = context.settings.required("url");
    const exchange = prepare(context, format);
    const client = await openClient(context.settings, context.io, url);
    try {
      return await exchange(client);
    } finally {
      await client.close();
    }
  };
}

/** A unary call whose reply is printed as ProtoJSON. */
function printed<O extends DescMessage>(
  schema: O,
  prepare: (context: ActionContext) => Exchange<MessageShape<O>>,
): Action {
  return oneCall(["text", "json"], (context, format) => {
    const call = prepare(context);
    return async (client) => {
      printJson(context.io.stdout, encodeProtoJson(schema, await call(client)), format);
      return EXIT.ok;
    };
  });
}

const STATES = Object.values(pb.TaskState).filter(
  (v): v is string => typeof v === "string" && v !== "UNSPECIFIED",
);

/** `working`, `input-required`, `INPUT_REQUIRED` or `TASK_STATE_INPUT_REQUIRED`. */
export function parseState(value: string): pb.TaskState {
  const name = value
    .trim()
    .toUpperCase()
    .replace(/-/g, "_")
    .replace(/^TASK_STATE_/, "");
  const state = pb.TaskState[name as keyof typeof pb.TaskState];
  if (typeof state !== "number" || state === pb.TaskState.UNSPECIFIED) {
    throw new UsageError(
      `--status must be one of ${STATES.map((s) => s.toLowerCase().replace(/_/g, "-")).join(", ")}.`,
    );
  }
  return state;
}

const method = pb.A2AService.method;

export const taskActions = {
  get: printed(pb.TaskSchema, ({ settings }) => {
    const request = { id: settings.required("task_id"), historyLength: settings.number("history_length", 0) };
    return (client) => client.unary(method.getTask, request);
  }),

  list: oneCall(["table", "json"], ({ settings, io }, format) => {
    const url = settings.required("url");
    const statusText = settings.string("status");
    const request = {
      contextId: settings.string("context_id") ?? "",
      status: statusText ? parseState(statusText) : pb.TaskState.UNSPECIFIED,
      pageSize: settings.number("page_size", 1),
      pageToken: settings.string("page_token") ?? "",
      includeArtifacts: settings.flag("include_artifacts"),
    };
    const next = (token: string): string =>
      [
        "iac-code a2a-client task-list --url",
        shellWord(url),
        ...(request.contextId ? ["--context-id", shellWord(request.contextId)] : []),
        ...(statusText ? ["--status", shellWord(statusText)] : []),
        ...(request.pageSize !== undefined ? ["--page-size", String(request.pageSize)] : []),
        "--page-token",
        shellWord(token),
      ].join(" ");
    return async (client) => {
      const response = await client.unary(method.listTasks, request);
      if (format === "json") {
        // The four fields are REQUIRED in A2A 1.0: printed even when empty or zero.
        const json = encodeProtoJson(pb.ListTasksResponseSchema, response) as JsonObject;
        const { nextPageToken, pageSize, totalSize } = response;
        printJson(io.stdout, { tasks: json.tasks ?? [], nextPageToken, pageSize, totalSize }, format);
      } else {
        io.stdout.write(taskTable(response, next));
      }
      return EXIT.ok;
    };
  }),

  cancel: printed(pb.TaskSchema, ({ settings }) => {
    const id = settings.required("task_id");
    return (client) => client.unary(method.cancelTask, { id });
  }),

  /** Prints each event as a JSON line until the task stops (terminal, or waiting for input or auth). */
  subscribe: oneCall(["text", "json"], ({ settings, io }) => {
    const id = settings.required("task_id");
    return async (client) => {
      for await (const event of client.stream(method.subscribeToTask, { id })) {
        io.stdout.write(`${sortedJson(encodeProtoJson(pb.StreamResponseSchema, event))}\n`);
        if (stops(event)) break;
      }
      return EXIT.ok;
    };
  }),

  pushCreate: printed(pb.TaskPushNotificationConfigSchema, ({ settings }) => {
    const taskId = settings.required("task_id");
    const id = settings.required("config_id");
    const url = settings.required("callback_url");
    const scheme = settings.string("auth_scheme");
    const credentials = settings.string("auth_credentials");
    const config = {
      taskId,
      id,
      url,
      token: settings.string("notification_token") ?? "",
      authentication: scheme !== undefined || credentials !== undefined ? { scheme, credentials } : undefined,
    };
    return (client) => client.unary(method.createTaskPushNotificationConfig, config);
  }),

  pushGet: printed(pb.TaskPushNotificationConfigSchema, ({ settings }) => {
    const request = { taskId: settings.required("task_id"), id: settings.required("config_id") };
    return (client) => client.unary(method.getTaskPushNotificationConfig, request);
  }),

  pushList: printed(pb.ListTaskPushNotificationConfigsResponseSchema, ({ settings }) => {
    const request = {
      taskId: settings.required("task_id"),
      pageSize: settings.number("page_size", 1),
      pageToken: settings.string("page_token") ?? "",
    };
    return (client) => client.unary(method.listTaskPushNotificationConfigs, request);
  }),

  pushDelete: oneCall(["text", "json"], ({ settings, io }, format) => {
    const taskId = settings.required("task_id");
    const id = settings.required("config_id");
    return async (client) => {
      await client.unary(method.deleteTaskPushNotificationConfig, { taskId, id });
      if (format === "json") printJson(io.stdout, { deleted: { taskId, id } }, format);
      else io.stdout.write(`Deleted push notification config ${id} of task ${taskId}.\n`);
      return EXIT.ok;
    };
  }),

  extendedCard: printed(pb.AgentCardSchema, () => (client) => client.unary(method.getExtendedAgentCard, {})),
};

const STOP_STATES = new Set([
  pb.TaskState.COMPLETED,
  pb.TaskState.FAILED,
  pb.TaskState.CANCELED,
  pb.TaskState.REJECTED,
  pb.TaskState.INPUT_REQUIRED,
  pb.TaskState.AUTH_REQUIRED,
]);

function stops(event: pb.StreamResponse): boolean {
  const { payload } = event;
  const state =
    payload.case === "statusUpdate"
      ? payload.value.status?.state
      : payload.case === "task"
        ? payload.value.status?.state
        : undefined;
  return state !== undefined && STOP_STATES.has(state);
}

/**
 * The card as the server sent it (verified first when asked), keys sorted.
 * Only an HTTP server serves the card; a URL that names another transport is
 * refused with the command that works there (the URL may hold a password, so
 * it is not repeated).
 */
export const discoverAction: Action = async ({ settings, io, jsonErrors }) => {
  const format = settings.output(["text", "json"]);
  jsonErrors(format === "json");
  const url = settings.required("url");
  if (directEndpoint(url)) {
    const notServed = `discover reads the agent card over HTTP(S) (GET /.well-known/agent-card.json), which a ${schemeOf(url)} URL does not serve`;
    // The extended card is served to authenticated callers only (A2A spec).
    throw new UsageError(
      carriesCredentials(url)
        ? `${notServed}: use \`iac-code a2a-client extended-card\` with the same --url and the server's credentials (GetExtendedAgentCard, served to authenticated callers only) instead.`
        : `${notServed}, and neither is the extended card (GetExtendedAgentCard is served to authenticated callers only, and a ${schemeOf(url)} URL carries no credentials).`,
    );
  }
  const card = await discoverCard(
    url,
    settings.auth(),
    settings.verification(io.cwd()),
    settings.timeoutMs(),
  );
  printJson(io.stdout, card, format);
  return EXIT.ok;
};
