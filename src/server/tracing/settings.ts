// Trace export settings, read only from the standard OpenTelemetry variables:
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or OTEL_EXPORTER_OTLP_ENDPOINT
// (+ /v1/traces), OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL, OTEL_SERVICE_NAME, and
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT. No endpoint: tracing is off.
import { ConfigError } from "../settings.js";

export type OtlpProtocol = "http/json" | "http/protobuf";
const PROTOCOLS: readonly string[] = ["http/json", "http/protobuf"];

export interface TracingSettings {
  /** Where spans are POSTed (the traces path included). */
  url: string;
  protocol: OtlpProtocol;
  /** OTEL_SERVICE_NAME; unset, each server names itself (iac-code-a2a, iac-code-agui). */
  serviceName?: string;
  /** Prompt and reply text on model-call spans (off unless asked for). */
  captureMessageContent: boolean;
}

/** The service name of each server when OTEL_SERVICE_NAME is not set. */
export const DEFAULT_SERVICE_NAMES = { a2a: "iac-code-a2a", agui: "iac-code-agui" } as const;
export type TracedServer = keyof typeof DEFAULT_SERVICE_NAMES;

function checkedUrl(raw: string, variable: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${variable}: not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new ConfigError(`${variable}: must be an http:// or https:// URL (OTLP over HTTP)`);
  return url.href;
}

/** The settings the environment gives, or undefined when no endpoint is set (or OTEL_SDK_DISABLED=true). */
export function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  let url: string;
  if (traces) url = checkedUrl(traces, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  else if (base) url = `${checkedUrl(base, "OTEL_EXPORTER_OTLP_ENDPOINT").replace(/\/+$/, "")}/v1/traces`;
  else return undefined;
  const protocolVariable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim()
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = env[protocolVariable]?.trim() || "http/protobuf";
  if (!PROTOCOLS.includes(protocol))
    throw new ConfigError(`${protocolVariable}: "${protocol}" is not supported (http/json or http/protobuf)`);
  return {
    url,
    protocol: protocol as OtlpProtocol,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || undefined,
    captureMessageContent:
      env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true",
  };
}
