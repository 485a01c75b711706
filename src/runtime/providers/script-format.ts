// The scripted provider's file format (YAML or JSON), its JSON Schema and the
// loader. The format is documented for front-end teams in scripted.md.
import { readFileSync } from "node:fs";
import { Ajv2020 } from "ajv/dist/2020.js";
import YAML from "yaml";
import { ConfigError } from "../errors.js";

export interface ScriptUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
}

export type ScriptStep =
  | { text: string | string[] }
  | { thinking: string | string[]; signature?: string }
  | {
      toolCall: {
        name: string;
        input: Record<string, unknown>;
        id?: string;
        argumentChunks?: number;
      };
    }
  | { usage: ScriptUsage }
  | { delayMs: number }
  | { error: { kind: "authentication" | "retryable" | "fatal"; message?: string } };

export interface ScriptMatcher {
  /** Substring of the text the user typed for the current turn. */
  userText?: string;
  /** Regular expression (JavaScript syntax) tested against the same text. */
  userTextPattern?: string;
  /** Every one of these tools was called earlier in the current turn. */
  toolsCalled?: string[];
  /** None of these tools was called earlier in the current turn. */
  toolsNotCalled?: string[];
  /**
   * The request ends with a tool result that matches. pattern: a regular
   * expression the result text must match; its groups fill {{result.N}} in the reply.
   */
  lastToolResult?: { tool?: string; isError?: boolean; contains?: string; pattern?: string };
  /** 0 for the first model call of a turn, 1 after the first tool round, ... */
  round?: number;
  /** stream (a loop call) or complete (a side call such as compaction). Default: stream. */
  kind?: "stream" | "complete";
  /** A pipeline step's call: the step id (the <!--step:ID--> marker of the step's system prompt). */
  step?: string;
  /** A substring of the system prompt (a pipeline step's prompt shows the context fields it uses). */
  systemText?: string;
  /** A regular expression the system prompt must match; its groups fill {{system.N}} in the reply. */
  systemPattern?: string;
  /** A candidate's sub-pipeline call: its index (the <!--candidate:N--> marker). */
  candidate?: number;
}

export interface ScriptRule {
  name?: string;
  when?: ScriptMatcher;
  reply: ScriptStep[];
  stopReason?: "end_turn" | "tool_use" | "max_tokens";
}

export interface Script {
  version: 1;
  model?: string;
  /** The scripted model's context window in tokens (compaction triggers near it); default: the model table's. */
  contextWindow?: number;
  defaults?: {
    /** Split text and thinking strings into chunks of this many characters. */
    chunkSize?: number;
    /** Pause between two emitted chunks. */
    chunkDelayMs?: number;
    /** Usage reported when a reply has no usage step (otherwise estimated from lengths). */
    usage?: ScriptUsage;
  };
  rules: ScriptRule[];
  /** Reply when no rule matches (default: a short text saying so). */
  fallback?: ScriptStep[];
}

const usageSchema = {
  type: "object",
  additionalProperties: false,
  required: ["inputTokens", "outputTokens"],
  properties: {
    inputTokens: { type: "integer", minimum: 0 },
    outputTokens: { type: "integer", minimum: 0 },
    cachedInputTokens: { type: "integer", minimum: 0 },
  },
} as const;

const textOrChunks = {
  oneOf: [{ type: "string" }, { type: "array", items: { type: "string" }, minItems: 1 }],
} as const;

const stepSchema = {
  oneOf: [
    { type: "object", additionalProperties: false, required: ["text"], properties: { text: textOrChunks } },
    {
      type: "object",
      additionalProperties: false,
      required: ["thinking"],
      properties: { thinking: textOrChunks, signature: { type: "string" } },
    },
    {
      type: "object",
      additionalProperties: false,
      required: ["toolCall"],
      properties: {
        toolCall: {
          type: "object",
          additionalProperties: false,
          required: ["name", "input"],
          properties: {
            name: { type: "string", minLength: 1 },
            input: { type: "object" },
            id: { type: "string", minLength: 1 },
            argumentChunks: { type: "integer", minimum: 1 },
          },
        },
      },
    },
    { type: "object", additionalProperties: false, required: ["usage"], properties: { usage: usageSchema } },
    {
      type: "object",
      additionalProperties: false,
      required: ["delayMs"],
      properties: { delayMs: { type: "integer", minimum: 0 } },
    },
    {
      type: "object",
      additionalProperties: false,
      required: ["error"],
      properties: {
        error: {
          type: "object",
          additionalProperties: false,
          required: ["kind"],
          properties: {
            kind: { enum: ["authentication", "retryable", "fatal"] },
            message: { type: "string" },
          },
        },
      },
    },
  ],
} as const;

const scriptSchema = {
  type: "object",
  additionalProperties: false,
  required: ["version", "rules"],
  properties: {
    version: { const: 1 },
    model: { type: "string", minLength: 1 },
    contextWindow: { type: "integer", minimum: 1000 },
    defaults: {
      type: "object",
      additionalProperties: false,
      properties: {
        chunkSize: { type: "integer", minimum: 1 },
        chunkDelayMs: { type: "integer", minimum: 0 },
        usage: usageSchema,
      },
    },
    rules: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["reply"],
        properties: {
          name: { type: "string" },
          when: {
            type: "object",
            additionalProperties: false,
            properties: {
              userText: { type: "string" },
              userTextPattern: { type: "string" },
              toolsCalled: { type: "array", items: { type: "string" } },
              toolsNotCalled: { type: "array", items: { type: "string" } },
              lastToolResult: {
                type: "object",
                additionalProperties: false,
                properties: {
                  tool: { type: "string" },
                  isError: { type: "boolean" },
                  contains: { type: "string" },
                  pattern: { type: "string" },
                },
              },
              round: { type: "integer", minimum: 0 },
              kind: { enum: ["stream", "complete"] },
              step: { type: "string", minLength: 1 },
              systemText: { type: "string", minLength: 1 },
              systemPattern: { type: "string", minLength: 1 },
              candidate: { type: "integer", minimum: 0 },
            },
          },
          reply: { type: "array", items: stepSchema },
          stopReason: { enum: ["end_turn", "tool_use", "max_tokens"] },
        },
      },
    },
    fallback: { type: "array", items: stepSchema },
  },
} as const;

const validateScript = new Ajv2020({ allErrors: true, strict: true }).compile(scriptSchema);

/** Parses and validates a script text; `origin` names it in error messages. */
export function parseScript(text: string, origin: string): Script {
  let data: unknown;
  try {
    data = YAML.parse(text);
  } catch (error) {
    throw new ConfigError(`Script ${origin} is not valid YAML or JSON: ${(error as Error).message}`);
  }
  if (!validateScript(data)) {
    const problems = (validateScript.errors ?? [])
      .slice(0, 5)
      .map((e) => `${e.instancePath || "/"} ${e.message ?? "is invalid"}`)
      .join("; ");
    throw new ConfigError(`Script ${origin} does not match the script format: ${problems}`);
  }
  const script = data as Script;
  for (const [i, rule] of script.rules.entries()) {
    for (const [name, pattern] of [
      ["userTextPattern", rule.when?.userTextPattern],
      ["lastToolResult.pattern", rule.when?.lastToolResult?.pattern],
      ["systemPattern", rule.when?.systemPattern],
    ]) {
      if (pattern === undefined) continue;
      try {
        new RegExp(pattern);
      } catch {
        throw new ConfigError(`Script ${origin}: rule ${i} has an invalid ${name}`);
      }
    }
  }
  return script;
}

export function loadScriptFile(file: string): Script {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(
      `Cannot read script file ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
    );
  }
  return parseScript(text, file);
}
