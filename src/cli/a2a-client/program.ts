// `iac-code a2a-client`: the command group and its options. Each action
// returns an exit code (errors.ts); nothing here calls process.exit, so the
// tests run the same commands in-process. This module holds only the command
// tree: the actions, and with them the transports (ws, ioredis, Connect), the
// protobuf descriptors and the validators, are loaded when a subcommand runs
// (run-action.ts), so `iac-code --help` loads none of them.
import { Command, CommanderError, Option } from "commander";
import { EXIT, type ExitCode } from "../../a2a/client/errors.js";
import type { ClientIo, LoadAction } from "./action.js";

const EXIT_CODES_HELP = `
Exit codes:
  0  success
  1  error (the call failed, the server answered an A2A error, a required value is missing)
  2  usage error (unknown option, invalid value)
  3  input required: the turn waits for a permission or question answer (printed as JSON on
     stdout); continue it with \`iac-code a2a-client answer\``;

const callModule = () => import("./actions-call.js");
const tasksModule = () => import("./actions-tasks.js");

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

function addConnectionOptions(command: Command, withBinding = true): Command {
  command
    .option(
      "--url <url>",
      "A2A server base URL (agent card discovery), grpc(s)://host:port, or a custom transport: unix://<path>, ws(s)://…, grpc-jsonrpc://host:port, redis(s)://…?request-stream=…, stdio:<command>",
    )
    .option("--token <token>", "bearer token (env IACCODE_A2A_HTTP_TOKEN)")
    .option("--basic-username <name>", "basic auth user (env IACCODE_A2A_BASIC_USERNAME)")
    .option("--basic-password <password>", "basic auth password (env IACCODE_A2A_BASIC_PASSWORD)")
    .option("--api-key <key>", "API key (env IACCODE_A2A_API_KEY)")
    .option(
      "--api-key-header <name>",
      "header of the API key (env IACCODE_A2A_API_KEY_HEADER; default X-API-Key)",
    )
    .option("--verify-card-secret <secret>", "verify the agent card signature with this HMAC secret")
    .addOption(new Option("--signing-secret <secret>", "alias of --verify-card-secret").hideHelp())
    .option(
      "--verify-card-jwks-url <url>",
      "verify the agent card signature with the keys of this https JWKS",
    )
    .option(
      "--verify-card-jwks-file <path>",
      "verify the agent card signature with the keys of this JWKS file",
    )
    .option("--require-card-signature", "refuse an unsigned agent card")
    .addOption(new Option("--require-signature", "alias of --require-card-signature").hideHelp())
    .option(
      "--timeout <seconds>",
      "seconds to wait for a reply or between stream events; 0 waits forever (default 30)",
    );
  if (withBinding) {
    command.option(
      "--binding <name>",
      "jsonrpc, rest or grpc (default: the first interface of the agent card this client speaks)",
    );
  }
  return command;
}

/** Commander's own exits (help, version, usage errors): 0 stays 0, any error is a usage error. */
const usageExit = (error: CommanderError): ExitCode => (error.exitCode === 0 ? EXIT.ok : EXIT.usage);

export function buildA2aClientCommand(
  io: ClientIo,
  onExit: (code: ExitCode) => void,
  onCommanderExit: (error: CommanderError) => void = (error) => {
    throw error;
  },
): Command {
  const group = new Command("a2a-client")
    .description("A2A 1.0 client: call an agent, inspect and manage its tasks (JSON-RPC, HTTP+JSON or gRPC)")
    .option("--config <path>", "YAML config file (keys of schemas/config/a2a-client.json, - or _)")
    .configureOutput({ writeOut: (text) => io.stdout.write(text), writeErr: (text) => io.stderr.write(text) })
    .showHelpAfterError()
    .exitOverride(onCommanderExit)
    .addHelpText("after", EXIT_CODES_HELP);

  const run = (load: LoadAction) => async (_options: unknown, command: Command) => {
    const { runAction } = await import("./run-action.js");
    onExit(await runAction(io, command, load));
  };

  const sub = (name: string, description: string): Command =>
    group.command(name).description(description).addHelpText("after", EXIT_CODES_HELP);

  addConnectionOptions(sub("call", "Send a prompt to the agent and print its answer"))
    .option("--route <spec>", "a named route: name=url;skills=a,b;tags=x,y (repeatable)", collect)
    .option("--route-name <name>", "call the route of this name")
    .requiredOption("-p, --prompt <text>", "the message to send")
    .option(
      "--cwd <dir>",
      "workspace sent as metadata.iac_code.cwd (default: none sent, the server's default workspace)",
    )
    .option("--context-id <id>", "continue this context")
    .option("--iac-code-model <model>", "model for this turn")
    .option("--iac-code-api-key <key>", "model API key for this turn")
    .option("--thinking-enabled", "ask for thinking")
    .option("--no-thinking-enabled", "ask for no thinking")
    .option("--thinking-effort <effort>", "thinking effort")
    .option("--thinking-budget <tokens>", "thinking budget (tokens, positive)")
    .option("--stream", "stream the answer (SendStreamingMessage)")
    .option("--no-stream", "wait for the answer (SendMessage; default)")
    .option("--output <format>", "text (default) or json")
    .action(run(async () => (await callModule()).callAction));

  addConnectionOptions(
    sub("answer", "Answer the permission or question request a task waits for, and continue"),
  )
    .option("--task-id <id>", "the waiting task (requestTaskId)")
    .requiredOption("--input-id <id>", "the request's inputId")
    .option("--decision <decision>", "permission: allow_once, allow_always or deny")
    .option("--answer <text>", "question: an option id, label or number, or free text when allowed")
    .option("--stream", "stream the continuation (SendStreamingMessage)")
    .option("--no-stream", "wait for the continuation (SendMessage; default)")
    .option("--output <format>", "text (default) or json")
    .action(run(async () => (await callModule()).answerAction));

  addConnectionOptions(
    sub(
      "discover",
      "Print the agent card served over HTTP(S) (verified when a verification option is set); on other transports use extended-card (authenticated callers only)",
    ),
    false,
  )
    .option("--output <format>", "text (default: indented JSON) or json (one line)")
    .action(run(async () => (await tasksModule()).discoverAction));

  const taskCommands: Array<[string, string, (command: Command) => Command, LoadAction]> = [
    [
      "task-get",
      "Print a task (GetTask)",
      (c) =>
        c
          .option("--task-id <id>", "task id")
          .option("--history-length <n>", "at most this many history messages"),
      async () => (await tasksModule()).taskActions.get,
    ],
    [
      "task-list",
      "List tasks as a table (ListTasks)",
      (c) =>
        c
          .option("--context-id <id>", "only this context")
          .option("--status <state>", "only this state (working, input-required, TASK_STATE_FAILED, ...)")
          .option("--page-size <n>", "tasks per page")
          .option("--page-token <token>", "the page to show (from the previous page)")
          .option("--include-artifacts", "include artifacts (json output)"),
      async () => (await tasksModule()).taskActions.list,
    ],
    [
      "task-cancel",
      "Cancel a task (CancelTask)",
      (c) => c.option("--task-id <id>", "task id"),
      async () => (await tasksModule()).taskActions.cancel,
    ],
    [
      "task-subscribe",
      "Print a running task's events as JSON lines until it stops (SubscribeToTask)",
      (c) => c.option("--task-id <id>", "task id"),
      async () => (await tasksModule()).taskActions.subscribe,
    ],
    [
      "push-config-create",
      "Store a push notification config for a task",
      (c) =>
        c
          .option("--task-id <id>", "task id")
          .option("--config-id <id>", "config id")
          .option("--callback-url <url>", "webhook URL")
          .option("--notification-token <token>", "token sent with each notification")
          .option("--auth-scheme <scheme>", "webhook auth scheme (e.g. Bearer)")
          .option("--auth-credentials <credentials>", "webhook credentials"),
      async () => (await tasksModule()).taskActions.pushCreate,
    ],
    [
      "push-config-get",
      "Print a push notification config",
      (c) => c.option("--task-id <id>", "task id").option("--config-id <id>", "config id"),
      async () => (await tasksModule()).taskActions.pushGet,
    ],
    [
      "push-config-list",
      "List a task's push notification configs",
      (c) =>
        c
          .option("--task-id <id>", "task id")
          .option("--page-size <n>", "configs per page")
          .option("--page-token <token>", "the page to show"),
      async () => (await tasksModule()).taskActions.pushList,
    ],
    [
      "push-config-delete",
      "Delete a push notification config",
      (c) => c.option("--task-id <id>", "task id").option("--config-id <id>", "config id"),
      async () => (await tasksModule()).taskActions.pushDelete,
    ],
    [
      "extended-card",
      "Print the extended agent card (GetExtendedAgentCard)",
      (c) => c,
      async () => (await tasksModule()).taskActions.extendedCard,
    ],
  ];
  for (const [name, description, options, load] of taskCommands) {
    const command = options(addConnectionOptions(sub(name, description)));
    command.option(
      "--output <format>",
      name === "task-list" ? "table (default) or json" : "text (default: indented JSON) or json (one line)",
    );
    command.action(run(load));
  }

  sub("route-preview", "Resolve a route offline (ignores --config) and optionally save the route set")
    .option("--route <spec>", "a named route: name=url;skills=a,b;tags=x,y (repeatable)", collect)
    .option("--name <name>", "route name")
    .option("--skill <skill>", "skill to match")
    .option("--prompt <text>", "prompt whose words are matched against tags and names")
    .option("--route-state-dir <dir>", "save the routes to <dir>/routes.json")
    .addOption(new Option("--persistence-dir <dir>", "alias of --route-state-dir").hideHelp())
    .option("--save-routes", "save the routes (needs --route-state-dir)")
    .option("--output <format>", "text (default: indented JSON) or json (one line)")
    .action(run(async () => (await import("./actions-routes.js")).routePreviewAction));

  return group;
}

/** Runs `a2a-client <argv>` and resolves with its exit code. */
export async function runA2aClient(argv: string[], io: ClientIo): Promise<ExitCode> {
  let code: ExitCode = EXIT.ok;
  const command = buildA2aClientCommand(io, (exit) => (code = exit));
  try {
    await command.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    return usageExit(error);
  }
  return code;
}

/** The one line main.ts needs: `iac-code a2a-client ...` with the process's streams. */
export function registerA2aClientCommand(program: Command): void {
  const io: ClientIo = {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: () => process.cwd(),
  };
  program.addCommand(
    buildA2aClientCommand(
      io,
      (code) => process.exit(code),
      (error) => process.exit(usageExit(error)),
    ),
  );
}
