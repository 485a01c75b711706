// `route-preview`: resolve --route specs offline and optionally save them.
import { ClientError, EXIT } from "../../a2a/client/errors.js";
import { printJson } from "./output.js";
import type { Action } from "./action.js";
import { parseRouteSpec, resolveRoute, saveRoutes } from "./routes.js";

export const routePreviewAction: Action = ({ settings, opts, io, jsonErrors }) => {
  const format = settings.output(["text", "json"]);
  jsonErrors(format === "json");
  const specs = (opts.route as string[] | undefined) ?? [];
  if (specs.length === 0) throw new ClientError("At least one --route is required.");
  const routes = specs.map(parseRouteSpec);
  const dir = opts.routeStateDir as string | undefined;
  if (opts.saveRoutes && !dir) throw new ClientError("--route-state-dir is required with --save-routes.");
  const route = resolveRoute(routes, {
    name: opts.name as string | undefined,
    skill: opts.skill as string | undefined,
    prompt: opts.prompt as string | undefined,
  });
  // A directory alone also saves (the reference's behaviour).
  if (dir) saveRoutes(dir, routes);
  printJson(io.stdout, { ...route }, format);
  return Promise.resolve(EXIT.ok);
};
