// Finds the canonical JSON Schemas under schemas/ (everything except examples,
// OpenAPI documents and the error catalogue data) and checks their conventions.
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

export interface SchemaEntry {
  /** Contract name, e.g. "agui/run-agent-input" (path under schemas/ without .json). */
  name: string;
  id: string;
  /** PascalCase; names the generated type and parse function. */
  title: string;
  /** Path relative to the repository root. */
  file: string;
  schema: Record<string, unknown> | undefined;
}

const EXCLUDED = new Set(["examples", "openapi", path.join("errors", "catalogue")]);
export const SCHEMA_ID_BASE = "https://schemas.iac-code.dev/";

function walk(root: string, dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const full = path.join(dir, f);
      const rel = path.relative(root, full);
      if (EXCLUDED.has(rel)) return [];
      if (statSync(full).isDirectory()) return walk(root, full);
      return f.endsWith(".json") ? [rel] : [];
    });
}

export function collectSchemas(root: string): SchemaEntry[] {
  const seenTitles = new Map<string, string>();
  return walk(root, root).map((rel) => {
    const schema = JSON.parse(readFileSync(path.join(root, rel), "utf8")) as Record<string, unknown>;
    const name = rel
      .replace(/\.json$/, "")
      .split(path.sep)
      .join("/");
    const fail = (why: string) => {
      throw new Error(`schemas/${rel}: ${why}`);
    };
    if (schema.$schema !== "https://json-schema.org/draft/2020-12/schema")
      fail("$schema must be draft 2020-12");
    if (schema.$id !== `${SCHEMA_ID_BASE}${name}.json`) fail(`$id must be ${SCHEMA_ID_BASE}${name}.json`);
    const title = schema.title;
    if (typeof title !== "string" || !/^[A-Z][A-Za-z0-9]*$/.test(title)) fail("title must be PascalCase");
    const other = seenTitles.get(title as string);
    if (other) fail(`title ${String(title)} is already used by ${other}`);
    seenTitles.set(title as string, name);
    return { name, id: schema.$id as string, title: title as string, file: `schemas/${rel}`, schema };
  });
}
