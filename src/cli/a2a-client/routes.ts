// Named A2A routes for `call` and `route-preview`: specs such as
// `ros=http://host:41242;skills=iac_generation;tags=ros,vpc` (or the legacy
// positional `name=url;<skill>;<tag1,tag2>`), resolved by name, then by skill,
// then by keywords of the prompt against tags and names.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { A2AClientRoutes } from "../../contract/index.js";
import { ClientError } from "../../a2a/client/errors.js";

export interface Route {
  name: string;
  url: string;
  skills: string[];
  tags: string[];
}

const items = (value: string | string[] | undefined): string[] =>
  (Array.isArray(value) ? value : (value ?? "").split(","))
    .map((item) => item.trim())
    .filter((item) => item !== "");

export function parseRouteSpec(spec: string): Route {
  const segments = spec.split(";").map((segment) => segment.trim());
  const head = segments[0] ?? "";
  const eq = head.indexOf("=");
  if (eq < 0) throw new ClientError("A2A route must start with name=url.");
  const route: Route = {
    name: head.slice(0, eq).trim(),
    url: head.slice(eq + 1).trim(),
    skills: [],
    tags: [],
  };
  if (!route.name || !route.url) throw new ClientError("A2A route name and URL are required.");
  segments.slice(1).forEach((segment, index) => {
    if (segment === "") return;
    const at = segment.indexOf("=");
    // Legacy positional form: the second segment lists skills, the third tags.
    const key = at < 0 ? ["skills", "tags"][index] : segment.slice(0, at).trim();
    const value = at < 0 ? segment : segment.slice(at + 1);
    if (key === "skills") route.skills.push(...items(value));
    else if (key === "tags") route.tags.push(...items(value));
    else throw new ClientError(`Unknown A2A route segment '${key ?? segment}'. Expected skills or tags.`);
  });
  return route;
}

/** Routes of the (validated) config file: a spec, or a list of specs and {name, url, skills, tags}. */
export function routesFromConfig(value: A2AClientRoutes | undefined): Route[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).map((entry) => {
    if (typeof entry === "string") return parseRouteSpec(entry);
    return { name: entry.name, url: entry.url, skills: items(entry.skills), tags: items(entry.tags) };
  });
}

export interface RouteQuery {
  name?: string;
  skill?: string;
  prompt?: string;
}

export function resolveRoute(routes: Route[], query: RouteQuery): Route {
  const known = routes.map((route) => route.name).join(", ");
  if (query.name) {
    const named = routes.find((route) => route.name === query.name);
    if (!named) throw new ClientError(`Unknown A2A route '${query.name}'. Known routes: ${known}`);
    return named;
  }
  let candidates = query.skill ? routes.filter((route) => route.skills.includes(query.skill ?? "")) : [];
  if (candidates.length === 0 && query.prompt) {
    const words = new Set(query.prompt.toLowerCase().replace(/[,.]/g, " ").split(/\s+/).filter(Boolean));
    candidates = routes.filter(
      (route) =>
        words.has(route.name.toLowerCase()) || route.tags.some((tag) => words.has(tag.toLowerCase())),
    );
  }
  if (candidates.length === 1) return candidates[0];
  if (candidates.length > 1) {
    throw new ClientError(`Ambiguous A2A route. Candidates: ${candidates.map((r) => r.name).join(", ")}`);
  }
  throw new ClientError(`No A2A route matched. Known routes: ${known}`);
}

/** Writes `<dir>/routes.json` ({"routes": [...]}) owner-only (URLs may hold credentials). */
export function saveRoutes(dir: string, routes: Route[]): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, "routes.json");
  const temp = `${file}.${process.pid}.tmp`;
  const body = { routes: routes.map(({ name, url, skills, tags }) => ({ name, url, skills, tags })) };
  writeFileSync(temp, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
  return file;
}
