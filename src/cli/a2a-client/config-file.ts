// The client's YAML (or JSON) config file: keys with - or _, validated against
// schemas/config/a2a-client.json. Route entries are checked first so that a
// mapping without name or url gets the reference's message.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { parseA2AClientConfig, type A2AClientConfig } from "../../contract/index.js";
import { ClientError } from "../../a2a/client/errors.js";
import { routesFromConfig, type Route } from "./routes.js";

export interface ClientConfig {
  values: A2AClientConfig;
  routes: Route[];
}

function normaliseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normaliseKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([key, item]) => [
        key.replace(/-/g, "_"),
        normaliseKeys(item),
      ]),
    );
  }
  return value;
}

export function loadClientConfig(file: string): ClientConfig {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ClientError(
      `Cannot read A2A client config file ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  let data: unknown;
  try {
    data = parseYaml(text) as unknown;
  } catch (error) {
    throw new ClientError(
      `A2A client config file is not valid YAML: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  data ??= {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new ClientError("A2A client config file must contain a YAML mapping.");
  }
  const normalised = normaliseKeys(data) as Record<string, unknown>;
  for (const key of ["route", "routes"]) {
    const entries = normalised[key];
    for (const entry of Array.isArray(entries) ? (entries as unknown[]) : []) {
      if (entry !== null && typeof entry === "object" && !Array.isArray(entry)) {
        const { name, url } = entry as { name?: unknown; url?: unknown };
        if (!name || !url) throw new ClientError("A2A client route config entries require name and url.");
      }
    }
  }
  const parsed = parseA2AClientConfig(normalised);
  if (!parsed.ok) {
    const details = parsed.errors.map((e) => `${e.path} ${e.message}`).join("; ");
    throw new ClientError(`Invalid A2A client config ${file}: ${details}`);
  }
  const values = parsed.value;
  const routes = [...routesFromConfig(values.route), ...routesFromConfig(values.routes)];
  return { values, routes };
}
