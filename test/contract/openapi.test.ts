// The OpenAPI documents: every $ref resolves to a file and pointer that exist,
// every example validates with the project's own validators, the A2A document
// covers every HTTP+JSON route of A2A 1.0 (and its /{tenant} twin), the AG-UI
// document lists every pre-SSE error of the catalogue, and Redocly's recommended
// rules report no error.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { parse as parseYaml } from "yaml";
import { aguiErrorCatalogue, schemaIndex, type SchemaName } from "../../src/contract/index.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const OPENAPI_DIR = path.join(ROOT, "schemas/openapi");
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

type Json = Record<string, unknown>;

function loadDoc(file: string): Json {
  return parseYaml(readFileSync(path.join(OPENAPI_DIR, file), "utf8")) as Json;
}

function pointer(doc: unknown, fragment: string): unknown {
  let node = doc;
  for (const raw of fragment.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !(key in node)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

/** Every $ref in a YAML/JSON tree, with the file it appears in. */
function collectRefs(node: unknown, file: string, out: { file: string; ref: string }[] = []): typeof out {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, file, out);
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") out.push({ file, ref: value });
      else collectRefs(value, file, out);
    }
  }
  return out;
}

/** The contract a component schema stands for (by the file it $refs). */
function contractOf(schema: Json | undefined): SchemaName | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== "string") return undefined;
  const protojson = /a2a-protojson\.json#\/\$defs\/(\w+)$/.exec(ref);
  const name = protojson
    ? `a2a/protojson/${protojson[1]}`
    : ref.replace(/^\.\.\//, "").replace(/\.json$/, "");
  return name in schemaIndex ? (name as SchemaName) : undefined;
}

interface Validator {
  label: string;
  validate: (value: unknown) => boolean;
}

/** A validator for a media-type schema: a component $ref, a oneOf of them, or an inline schema we cannot check. */
function validatorFor(doc: Json, schema: Json | undefined): Validator | undefined {
  if (!schema) return undefined;
  const ref = schema.$ref;
  if (typeof ref === "string" && ref.startsWith("#/components/schemas/")) {
    const component = pointer(doc, ref.slice(1)) as Json | undefined;
    const name = contractOf(component);
    if (name) return { label: name, validate: (v) => schemaIndex[name].validate(v) };
    return undefined;
  }
  if (Array.isArray(schema.oneOf)) {
    const parts = (schema.oneOf as Json[]).map((s) => validatorFor(doc, s));
    if (parts.some((p) => p === undefined)) return undefined;
    const all = parts as Validator[];
    return {
      label: all.map((p) => p.label).join(" | "),
      validate: (v) => all.filter((p) => p.validate(v)).length === 1,
    };
  }
  return undefined;
}

interface MediaExample {
  where: string;
  value: unknown;
  validator: Validator | undefined;
}

function mediaExamples(doc: Json): MediaExample[] {
  const found: MediaExample[] = [];
  const visitContent = (content: unknown, where: string) => {
    if (!content || typeof content !== "object") return;
    for (const [mediaType, media] of Object.entries(content as Record<string, Json>)) {
      const validator = validatorFor(doc, media.schema as Json | undefined);
      if ("example" in media) found.push({ where: `${where} ${mediaType}`, value: media.example, validator });
      for (const [name, example] of Object.entries((media.examples ?? {}) as Record<string, Json>)) {
        found.push({ where: `${where} ${mediaType} ${name}`, value: example.value, validator });
      }
    }
  };
  for (const [p, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      visitContent((op.requestBody as Json | undefined)?.content, `${method.toUpperCase()} ${p} request`);
      for (const [status, response] of Object.entries((op.responses ?? {}) as Record<string, Json>)) {
        visitContent(response.content, `${method.toUpperCase()} ${p} ${status}`);
      }
    }
  }
  const components = (doc.components ?? {}) as Json;
  for (const [name, response] of Object.entries((components.responses ?? {}) as Record<string, Json>)) {
    visitContent(response.content, `components.responses.${name}`);
  }
  return found;
}

function operations(doc: Json): { path: string; method: string; op: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([p, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ path: p, method: m, op: item[m] as Json })),
  );
}

for (const file of ["agui.yaml", "a2a.yaml"]) {
  describe(`OpenAPI ${file}`, () => {
    const doc = loadDoc(file);

    it("is OpenAPI 3.1 with the JSON Schema 2020-12 dialect", () => {
      expect(doc.openapi).to.equal("3.1.0");
      expect(doc.jsonSchemaDialect).to.equal("https://json-schema.org/draft/2020-12/schema");
    });

    it("has only $refs that resolve to existing files and pointers", () => {
      for (const { ref } of collectRefs(doc, file)) {
        const [target, fragment = ""] = ref.split("#");
        if (target === "") {
          expect(pointer(doc, fragment), ref).to.not.equal(undefined);
          continue;
        }
        const absolute = path.resolve(OPENAPI_DIR, target);
        expect(existsSync(absolute), ref).to.equal(true);
        if (fragment) {
          const json = JSON.parse(readFileSync(absolute, "utf8")) as unknown;
          expect(pointer(json, fragment), ref).to.not.equal(undefined);
        }
      }
    });

    it("points every component schema at a named contract", () => {
      const schemas = ((doc.components as Json).schemas ?? {}) as Record<string, Json>;
      for (const [name, schema] of Object.entries(schemas)) {
        if (typeof schema.$ref === "string")
          expect(contractOf(schema), `components.schemas.${name}`).to.be.a("string");
      }
    });

    it("has examples that satisfy their schemas", () => {
      const examples = mediaExamples(doc);
      expect(examples).to.not.be.empty;
      const checked = examples.filter((e) => e.validator);
      expect(checked.length).to.be.greaterThan(0);
      for (const { where, value, validator } of checked) {
        expect(validator?.validate(value), `${where} (${validator?.label})`).to.equal(true);
      }
    });

    it("names every operation uniquely", () => {
      const ids = operations(doc).map((o) => o.op.operationId);
      expect(ids.every((id) => typeof id === "string")).to.equal(true);
      expect(new Set(ids).size).to.equal(ids.length);
    });
  });
}

describe("OpenAPI a2a.yaml routes", () => {
  const doc = loadDoc("a2a.yaml");
  const paths = doc.paths as Record<string, Json>;

  // a2a-spec.md §4.4, plus the spec-text POST form of :subscribe.
  const REST: [string, string, string][] = [
    ["post", "/message:send", "SendMessageResponse"],
    ["post", "/message:stream", "StreamResponse"],
    ["get", "/tasks/{id}", "Task"],
    ["get", "/tasks", "ListTasksResponse"],
    ["post", "/tasks/{id}:cancel", "Task"],
    ["get", "/tasks/{id}:subscribe", "StreamResponse"],
    ["post", "/tasks/{id}:subscribe", "StreamResponse"],
    ["post", "/tasks/{taskId}/pushNotificationConfigs", "TaskPushNotificationConfig"],
    ["get", "/tasks/{taskId}/pushNotificationConfigs/{configId}", "TaskPushNotificationConfig"],
    ["get", "/tasks/{taskId}/pushNotificationConfigs", "ListTaskPushNotificationConfigsResponse"],
    ["delete", "/tasks/{taskId}/pushNotificationConfigs/{configId}", "Empty"],
    ["get", "/extendedAgentCard", "AgentCard"],
  ];

  for (const [method, route, result] of REST) {
    for (const prefix of ["", "/{tenant}"]) {
      it(`${method.toUpperCase()} ${prefix}${route} answers ${result}, 401 and RestError`, () => {
        const op = paths[prefix + route]?.[method] as Json | undefined;
        expect(op, `${method} ${prefix}${route}`).to.exist;
        const responses = op!.responses as Record<string, Json>;
        const ok = (responses["200"] ?? responses["201"]).content as Record<string, Json>;
        const media = ok["application/json"] ?? ok["text/event-stream"];
        const schema = media.schema as Json;
        const target = (schema.items ?? schema) as Json;
        expect(target.$ref).to.equal(`#/components/schemas/${result}`);
        expect(responses["401"]).to.deep.equal({ $ref: "#/components/responses/Unauthorized" });
        expect(responses["404"]).to.deep.equal({ $ref: "#/components/responses/RestNotFound" });
        const params = (op!.parameters as Json[]).map((p) => p.$ref);
        expect(params).to.include("#/components/parameters/A2AVersion");
        if (prefix) expect(params[0]).to.equal("#/components/parameters/Tenant");
      });
    }
  }

  it("serves nothing else under the REST prefix", () => {
    const documented = new Set(REST.map(([m, r]) => `${m} ${r}`));
    for (const { path: p, method } of operations(doc)) {
      const route = p.replace(/^\/\{tenant\}/, "");
      if (
        [
          "/",
          "/health",
          "/metrics",
          "/.well-known/agent-card.json",
          "/iac-code/pipeline/state",
          "/iac-code/readiness",
        ].includes(p)
      )
        continue;
      expect(documented.has(`${method} ${route}`), `${method} ${p}`).to.equal(true);
    }
  });

  it("takes the ListTasks filters as camelCase query parameters", () => {
    const op = paths["/tasks"].get as Json;
    const names = (op.parameters as Json[]).map((p) => {
      const resolved = pointer(doc, (p.$ref as string).slice(1)) as Json;
      return `${String(resolved.in)}:${String(resolved.name)}`;
    });
    for (const q of [
      "contextId",
      "status",
      "pageSize",
      "pageToken",
      "historyLength",
      "statusTimestampAfter",
      "includeArtifacts",
    ]) {
      expect(names).to.include(`query:${q}`);
    }
  });

  it("documents the agent card's caching headers and 304", () => {
    const op = paths["/.well-known/agent-card.json"].get as Json;
    const responses = op.responses as Record<string, Json>;
    for (const status of ["200", "304"]) {
      expect(Object.keys(responses[status].headers as Json)).to.have.members([
        "Cache-Control",
        "ETag",
        "Last-Modified",
      ]);
    }
    expect(responses["304"]).to.not.have.property("content");
    expect(op.security).to.deep.equal([]);
  });

  it("describes the JSON-RPC endpoint with JSON and SSE responses", () => {
    const op = paths["/"].post as Json;
    const body = (op.requestBody as Json).content as Record<string, Json>;
    expect(body["application/json"].schema).to.deep.equal({ $ref: "#/components/schemas/JsonRpcRequest" });
    const ok = (op.responses as Record<string, Json>)["200"].content as Record<string, Json>;
    expect(Object.keys(ok)).to.have.members(["application/json", "text/event-stream"]);
  });

  it("answers 401 with the seed's body", () => {
    const unauthorized = pointer(doc, "/components/schemas/Unauthorized") as Json;
    expect(unauthorized.properties).to.deep.equal({ error: { const: "Unauthorized" } });
  });
});

describe("OpenAPI agui.yaml errors", () => {
  const doc = loadDoc("agui.yaml");
  const paths = doc.paths as Record<string, Json>;
  const text = readFileSync(path.join(OPENAPI_DIR, "agui.yaml"), "utf8");

  it("documents every pre-SSE status of the catalogue on POST / with the error envelope", () => {
    const responses = (paths["/"].post as Json).responses as Record<string, Json>;
    const runCodes = aguiErrorCatalogue.filter((e) => (e.surfaces as readonly string[]).includes("http"));
    for (const entry of runCodes) {
      if (entry.code === "EXECUTION_NOT_FOUND") continue; // cancel extension only
      const response = responses[String(entry.httpStatus)];
      expect(response, `${entry.code} -> ${entry.httpStatus}`).to.exist;
      const resolved = (
        typeof response.$ref === "string" ? pointer(doc, response.$ref.slice(1)) : response
      ) as Json;
      const media = (resolved.content as Record<string, Json>)["application/json"];
      expect(media.schema).to.deep.equal({ $ref: "#/components/schemas/ErrorEnvelope" });
      expect(text, entry.code).to.contain(entry.code);
    }
  });

  it("documents the cancel extension's 404 EXECUTION_NOT_FOUND", () => {
    const op = paths["/extensions/iac-code/v1/executions/{executionId}/cancel"].post as Json;
    const notFound = (op.responses as Record<string, Json>)["404"].content as Record<string, Json>;
    expect(notFound["application/json"].example).to.deep.equal({
      error: { code: "EXECUTION_NOT_FOUND", message: "The execution was not found." },
    });
  });

  it("streams AG-UI events as text/event-stream", () => {
    const ok = ((paths["/"].post as Json).responses as Record<string, Json>)["200"].content as Record<
      string,
      Json
    >;
    expect(ok["text/event-stream"].schema).to.deep.equal({
      type: "array",
      items: { $ref: "#/components/schemas/AguiEvent" },
    });
  });
});

describe("OpenAPI lint and codegen", () => {
  for (const file of ["agui.yaml", "a2a.yaml"]) {
    it(`${file} passes Redocly's recommended rules with no error`, async function () {
      this.timeout(120_000);
      const run = promisify(execFile);
      const { stdout } = await run(
        path.join(ROOT, "node_modules/.bin/redocly"),
        ["lint", "--format=json", `schemas/openapi/${file}`],
        { cwd: ROOT, env: { ...process.env, REDOCLY_TELEMETRY: "off" }, maxBuffer: 64 * 1024 * 1024 },
      );
      const report = JSON.parse(stdout) as { totals: { errors: number }; problems: { severity: string }[] };
      const errors = report.problems.filter((p) => p.severity === "error");
      expect(report.totals.errors, JSON.stringify(errors, null, 2)).to.equal(0);
    });
  }

  it("has generated TypeScript path types for both documents", () => {
    const a2a = readFileSync(path.join(ROOT, "generated/openapi/a2a.ts"), "utf8");
    const agui = readFileSync(path.join(ROOT, "generated/openapi/agui.ts"), "utf8");
    for (const id of ["jsonRpc", "sendMessageForTenant", "subscribeToTaskPost", "getAgentCard"]) {
      expect(a2a).to.contain(`${id}: {`);
    }
    for (const id of ["runAgent", "cancelExecution", "getAguiHealth"]) expect(agui).to.contain(`${id}: {`);
  });
});
