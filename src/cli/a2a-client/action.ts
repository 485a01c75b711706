// What a subcommand's action is and what it gets (the process's streams, the
// resolved settings, the config file's routes). Its own module so that the
// command tree (program.ts) and the actions it loads on demand both read it
// without importing each other.
import type { ExitCode } from "../../a2a/client/errors.js";
import type { Writer } from "./output.js";
import type { Route } from "./routes.js";
import type { Settings } from "./settings.js";

export interface ClientIo {
  stdout: Writer;
  stderr: Writer;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd(): string;
}

/** What an action gets: the resolved settings and the routes of the config file. */
export interface ActionContext {
  io: ClientIo;
  settings: Settings;
  configRoutes: Route[];
  /** The parsed options of the subcommand (camelCase). */
  opts: Record<string, unknown>;
  /** Errors are printed as JSON once the action knows it prints JSON. */
  jsonErrors: (on: boolean) => void;
}

export type Action = (context: ActionContext) => Promise<ExitCode>;

/** An action, imported when its subcommand runs. */
export type LoadAction = () => Promise<Action>;
