// Tracing as the servers and the runtime use it: spans through
// @opentelemetry/api only. Off (no endpoint configured) every helper here
// returns at once without creating a span; on, the SDK (sdk.ts) is imported
// once per process and shared by every server in it, and each server flushes
// its spans when it stops.
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { VERSION } from "../../version.js";
import type { SdkTracing } from "./sdk.js";
import {
  DEFAULT_SERVICE_NAMES,
  tracingSettings,
  type TracedServer,
  type TracingSettings,
} from "./settings.js";

export { SpanKind, SpanStatusCode, type Span };

/** The instrumentation scopes: which part of iac-code made a span. */
export type Scope = "iac-code.a2a" | "iac-code.agui" | "iac-code.runtime";

interface ProcessTracing {
  sdk?: { key: string; settings: TracingSettings; tracing: SdkTracing };
  opening?: Promise<void>;
}
// One per process, kept where a second copy of this module (a loader that
// evaluates it twice) finds it too, as @opentelemetry/api keeps its globals.
const GLOBAL_KEY = Symbol.for("iac-code.tracing");
const holder = globalThis as typeof globalThis & { [GLOBAL_KEY]?: ProcessTracing };
const shared: ProcessTracing = (holder[GLOBAL_KEY] ??= {});

/** True once an exporter is registered: the hot paths check this before anything else. */
export function tracingOn(): boolean {
  return shared.sdk !== undefined;
}

/** Whether prompt and reply text may go on spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true). */
export function captureMessageContent(): boolean {
  return shared.sdk?.settings.captureMessageContent ?? false;
}

/**
 * Starts exporting spans when the environment names an OTLP endpoint (a bad
 * protocol or URL throws a ConfigError naming the variable). Idempotent per
 * process; other settings replace the exporter (tests run several). Without
 * OTEL_SERVICE_NAME the resource is named after `server`; one process holding
 * both servers (tests, benches) keeps the first one's name.
 */
export async function startTracing(env: NodeJS.ProcessEnv, server: TracedServer): Promise<boolean> {
  const settings = tracingSettings(env);
  if (!settings) return false;
  await shared.opening;
  const key = JSON.stringify(settings);
  if (shared.sdk?.key === key) return true;
  shared.opening = (async () => {
    const previous = shared.sdk;
    shared.sdk = undefined;
    if (previous) await previous.tracing.shutdown();
    const { registerSdk } = await import("./sdk.js");
    const serviceName = settings.serviceName ?? DEFAULT_SERVICE_NAMES[server];
    shared.sdk = { key, settings, tracing: await registerSdk({ ...settings, serviceName }) };
  })();
  await shared.opening;
  return true;
}

/** Exports the spans ended so far (a server calls it when it stops). Never throws. */
export async function flushTracing(): Promise<void> {
  await shared.sdk?.tracing.flush().catch(() => undefined);
}

/** Flushes and unregisters the SDK (the CLI at exit, tests between runs). */
export async function stopTracing(): Promise<void> {
  const current = shared.sdk;
  shared.sdk = undefined;
  await current?.tracing.shutdown().catch(() => undefined);
}

export function tracer(scope: Scope): Tracer {
  return trace.getTracer(scope, VERSION);
}

/** A span started under `parent` (default: the active context), or undefined while tracing is off. */
export function startSpan(
  scope: Scope,
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes } = {},
  parent: Context = context.active(),
): Span | undefined {
  if (!shared.sdk) return undefined;
  return tracer(scope).startSpan(name, options, parent);
}

/** Runs `fn` with `span` as the active span (as is, when there is none). */
export function withSpan<T>(span: Span | undefined, fn: () => T): T {
  if (!span) return fn();
  return context.with(trace.setSpan(context.active(), span), fn);
}

/** Ends a span with an error status (the error's name only: messages may hold paths or input). */
export function failSpan(span: Span | undefined, error: unknown, description?: string): void {
  if (!span) return;
  const type = error instanceof Error ? error.name : typeof error;
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(description ? { message: description } : {}) });
}

/**
 * Runs `fn` in a span that ends when it settles (an error status when it
 * throws). While tracing is off `fn` runs alone.
 */
export function inSpan<T>(
  scope: Scope,
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes },
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  const span = startSpan(scope, name, options);
  return span ? spanned(span, fn) : fn(undefined);
}

async function spanned<T>(span: Span, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  try {
    return await withSpan(span, () => fn(span));
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

type HeaderBag = Record<string, string | string[] | undefined>;

/** The caller's trace context from W3C `traceparent` / `tracestate` request headers. */
export function extractContext(headers: HeaderBag): Context {
  if (!shared.sdk) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers, {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => carrier[key],
  });
}

/** Adds `traceparent` (and `tracestate`) for the active span to outgoing headers. */
export function injectContext(headers: Record<string, string>): void {
  if (!shared.sdk) return;
  propagation.inject(context.active(), headers);
}

/**
 * Drives `gen` with `span` active for each of its steps (a generator's body
 * runs in the context of whoever calls next(), so context.with around the
 * generator itself would not reach it). As is while tracing is off.
 */
export async function* withSpanSteps<T, R>(
  span: Span | undefined,
  gen: AsyncGenerator<T, R>,
): AsyncGenerator<T, R> {
  if (!span) return yield* gen;
  const active = trace.setSpan(context.active(), span);
  let done = false;
  try {
    for (;;) {
      const step = await context.with(active, () => gen.next());
      if (step.done) {
        done = true;
        return step.value;
      }
      yield step.value;
    }
  } finally {
    // Abandoned by the caller: let the inner generator run its own finally blocks.
    if (!done) await gen.return(undefined as R);
  }
}
